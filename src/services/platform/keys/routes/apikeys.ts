/** Workspace API key routes: mint, list, read, revoke. */
import { Elysia } from "elysia";
import { t } from "../../../../core/schema";
import { principalPlugin } from "../../../../access/http";
import { idempotentWithSecret } from "../../../../access/idempotent";
import { requirePrincipal, requireSession } from "../../../../access/principal";
import { HUMAN_CALLER, PLATFORM_CALLER, secured } from "../../../../access/openapi";
import { noContent } from "../../../../core/openapi";
import type { RouteDeps } from "../../route-deps";
import type { ApiKeyService } from "../apikeys";
import { ErrorBody, ListQuery, workspaceParams } from "../../schemas";
import { ApiKey, ApiKeyCreate, ApiKeyCreated, ApiKeyList } from "../schemas";

const tags = ["Platform: API keys"];
const slugParam = workspaceParams();
const keyParams = workspaceParams("key_id");

export function apiKeyRoutes(platform: RouteDeps & { readonly apiKeys: ApiKeyService }) {
  const { apiKeys } = platform;
  return new Elysia({ prefix: "/v1" })
    .use(principalPlugin(platform.authz))
    .guard(secured(PLATFORM_CALLER))
    .post("/workspaces/:workspace_slug/api-keys", async (c) => {
      const p = requireSession(c.principal, "Minting an API key");
      // The plaintext key is never stored at rest: a replay answers key: null.
      return idempotentWithSecret(platform.ctx.idempotency, c, p, { status: 201, field: "key" }, async () => {
        const r = await apiKeys.create(p, c.params.workspace_slug, c.body, c.meta);
        return { view: r.view, secret: r.key };
      });
    }, {
      params: slugParam,
      body: ApiKeyCreate,
      response: { 201: ApiKeyCreated, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody },
      detail: {
        tags,
        security: HUMAN_CALLER,
        summary: "Mint a workspace API key (action apikey.create; console session only)",
        description:
          "The key (svc_live_...) is in this response only; it is stored hashed. Its policy must be covered by your own role policy " +
          "in the workspace (403 POLICY_EXCEEDS_MINTER), and at every use it is intersected with your role policy of that moment, so " +
          "demoting or removing you shrinks or voids the key. API keys and personal access tokens cannot mint keys (403 SESSION_REQUIRED). " +
          "Accepts Idempotency-Key: a replay returns the same status and body with key: null (the plaintext is never kept); " +
          "if you lost the first response, revoke that key id and mint a new one.",
      },
    })
    .get("/workspaces/:workspace_slug/api-keys", ({ principal, params, query }) => apiKeys.list(requirePrincipal(principal), params.workspace_slug, query), {
      params: slugParam,
      query: ListQuery,
      response: { 200: ApiKeyList, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
      detail: { tags, summary: "List the workspace's API keys, revoked ones included (action apikey.list; cursor pages; never the key itself)" },
    })
    .get("/workspaces/:workspace_slug/api-keys/:key_id", ({ principal, params }) => apiKeys.get(requirePrincipal(principal), params.workspace_slug, params.key_id), {
      params: keyParams,
      response: { 200: ApiKey, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
      detail: { tags, summary: "Read an API key (action apikey.read)" },
    })
    .delete("/workspaces/:workspace_slug/api-keys/:key_id", async ({ principal, params, meta, set }) => {
      await apiKeys.revoke(requireSession(principal, "Revoking an API key"), params.workspace_slug, params.key_id, meta);
      set.status = 204;
    }, {
      params: keyParams,
      detail: {
        tags,
        security: HUMAN_CALLER,
        responses: noContent(),
        summary: "Revoke an API key (action apikey.delete; console session only)",
        description: "204; the key answers 401 from then on. Revoking an already revoked key is also 204; an unknown key or another workspace's is 404.",
      },
    });
}
