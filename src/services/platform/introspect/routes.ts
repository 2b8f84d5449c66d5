/** Introspection routes other services call to learn who a caller is. */
import { Elysia } from "elysia";
import { t } from "../../../core/schema";
import { JsonObject } from "../../../access/schemas";
import { principalPlugin } from "../../../access/http";
import { requirePrincipal } from "../../../access/principal";
import { PLATFORM_CALLER, secured } from "../../../access/openapi";
import type { RouteDeps } from "../route-deps";
import type { IntrospectService } from "./service";
import { ErrorBody, Introspection, PolicyStatement, Uuid } from "../schemas";

const tags = ["Platform: introspection"];

export function introspectRoutes(platform: RouteDeps & { readonly introspect: IntrospectService }) {
  return new Elysia({ prefix: "/v1/introspect" })
    .use(principalPlugin(platform.authz))
    .guard(secured(PLATFORM_CALLER))
    .get("", ({ principal }) => platform.introspect.current(requirePrincipal(principal)), {
      response: { 200: Introspection, 401: ErrorBody },
      detail: { tags, summary: "Current caller: principal, account, workspaces with role and services" },
    })
    .get("/workspaces/:workspace_id", ({ principal, params }) => platform.introspect.workspace(requirePrincipal(principal), params.workspace_id), {
      params: t.Object({ workspace_id: Uuid("The workspace's id") }),
      response: {
        200: t.Object({
          id: t.Optional(t.String()),
          is_member: t.Boolean(),
          role: JsonObject(),
          policy: t.Array(PolicyStatement),
          services: t.Array(t.String()),
        }),
        401: ErrorBody,
      },
      detail: { tags, summary: "The caller's membership, role, effective policy and enabled services; non-members get the same answer whether or not the workspace exists" },
    })
    .post("/api-key", ({ principal, set }) => {
      const body = platform.introspect.apiKey(principal);
      set.status = 201;
      return body;
    }, {
      response: {
        201: t.Object({ is_valid: t.Boolean(), workspace_id: t.String(), policy: t.Array(PolicyStatement), created_by: t.String(), api_key_id: t.String() }),
        401: ErrorBody,
      },
      detail: { tags, summary: "Validate a workspace API key (Authorization: Bearer svc_live_...); cache for 60 s and evaluate the policy yourself" },
    });
}
