/** Personal access token routes of the signed-in user: mint, list, revoke. */
import { Elysia } from "elysia";
import { t } from "../../../../core/schema";
import { principalPlugin } from "../../../../access/http";
import { requireHuman, requireSession } from "../../../../access/principal";
import { HUMAN_CALLER, secured } from "../../../../access/openapi";
import { noContent } from "../../../../core/openapi";
import type { RouteDeps } from "../../route-deps";
import type { PersonalTokenService } from "../personal-tokens";
import { ErrorBody, ListQuery, Uuid } from "../../schemas";
import { PersonalTokenCreate, PersonalTokenCreated, PersonalTokenList } from "../schemas";

const tags = ["Platform: personal access tokens"];

export function personalTokenRoutes(platform: RouteDeps & { readonly personalTokens: PersonalTokenService }) {
  const { personalTokens } = platform;
  return new Elysia({ prefix: "/v1/me/tokens" })
    .use(principalPlugin(platform.authz))
    .guard(secured(HUMAN_CALLER))
    .post("", async ({ principal, body, meta, set }) => {
      const r = await personalTokens.create(requireSession(principal, "Creating a personal access token"), body, meta);
      set.status = 201;
      return { id: r.view.id, name: r.view.name, token: r.token, prefix: r.view.prefix, last_four: r.view.last_four, created_at: r.view.created_at, expires_at: r.view.expires_at };
    }, {
      body: PersonalTokenCreate,
      response: { 201: PersonalTokenCreated, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody },
      detail: {
        tags,
        summary: "Create a personal access token (console session only)",
        description:
          "The token (pat_...) acts as you: it can do what your account can in your workspaces (checked live against your roles), " +
          "including creating and deleting workspaces, but it cannot mint or revoke API keys or personal tokens. It is shown only in this " +
          "response and stored hashed. expires_in_days 1-365, default 30: tokens always expire. No Idempotency-Key: a retried request " +
          "simply mints another token, which you can revoke.",
      },
    })
    .get("", ({ principal, query }) => personalTokens.list(requireHuman(principal, "Listing personal access tokens"), query), {
      query: ListQuery,
      response: { 200: PersonalTokenList, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody },
      detail: { tags, summary: "Your personal access tokens, revoked ones included (cursor pages; never the token itself)" },
    })
    .delete("/:token_id", async ({ principal, params, meta, set }) => {
      await personalTokens.revoke(requireSession(principal, "Revoking a personal access token"), params.token_id, meta);
      set.status = 204;
    }, {
      params: t.Object({ token_id: Uuid() }),
      detail: { tags, responses: noContent(), summary: "Revoke one of your personal access tokens (console session only; 204, also when already revoked; 404 when not yours)" },
    });
}
