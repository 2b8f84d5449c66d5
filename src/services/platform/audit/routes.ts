/** Workspace audit log route. */
import { Elysia } from "elysia";
import { t } from "../../../core/schema";
import { principalPlugin } from "../../../access/http";
import { requirePrincipal } from "../../../access/principal";
import { PLATFORM_CALLER, secured } from "../../../access/openapi";
import type { RouteDeps } from "../route-deps";
import type { AuditLogService } from "./service";
import { ErrorBody, workspaceParams } from "../schemas";
import { AuditList, AuditQuery } from "./schemas";

const tags = ["Platform: audit"];

export function auditRoutes(platform: RouteDeps & { readonly auditLog: AuditLogService }) {
  return new Elysia({ prefix: "/v1" })
    .use(principalPlugin(platform.authz))
    .guard(secured(PLATFORM_CALLER))
    .get("/workspaces/:workspace_slug/audit-log", ({ principal, params, query }) => platform.auditLog.list(requirePrincipal(principal), params.workspace_slug, query), {
      params: workspaceParams(),
      query: AuditQuery,
      response: { 200: AuditList, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
      detail: {
        tags,
        summary: "The workspace's audit log, newest first (action audit.list)",
        description: "Filters: actor_id, action (exact or prefix.*), since (inclusive) and until (exclusive) as ISO 8601. limit 1-200, default 50. Send the same filters with every page's cursor.",
      },
    });
}
