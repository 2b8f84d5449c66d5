/** The per-App audit log: GET /:app_slug/v1/audit-log (action auth.audit.list). */
import { t } from "../../../core/schema";
import { APP_ADMIN } from "../../../access/openapi";
import { AUTH_AUDIT_DEFAULT_LIMIT, AUTH_AUDIT_MAX_LIMIT } from "./service";
import type { AuditQueryService } from "./service";
import { ErrorBody, Pagination } from "../schemas";
import { adminCredentials, appGroup, appSlugParams, type AppScopeParts } from "../apps/scope";
import { AuditEntry } from "./schemas";

const tags = ["Auth: audit"];

const AuditQuery = t.Object({
  action: t.Optional(t.String({ description: 'Exact action ("user.signin") or prefix pattern ("user.*")' })),
  actor_id: t.Optional(t.String({ description: "User id, M2M client id, account id or API key id" })),
  target_id: t.Optional(t.String()),
  outcome: t.Optional(t.UnionEnum(["success", "failure"])),
  since: t.Optional(t.String({ description: "ISO 8601 date or date-time; entries at or after" })),
  until: t.Optional(t.String({ description: "ISO 8601 date or date-time; entries strictly before" })),
  limit: t.Optional(t.QueryInteger({ description: `1-${AUTH_AUDIT_MAX_LIMIT}, default ${AUTH_AUDIT_DEFAULT_LIMIT}` })),
  cursor: t.Optional(t.String()),
});

export function auditRoutes(auth: AppScopeParts & { auditLog: AuditQueryService }) {
  return appGroup(auth, APP_ADMIN).get(
    "/audit-log",
    ({ app, request, query }) => auth.auditLog.list(app, adminCredentials(request), query),
    {
      params: appSlugParams,
      query: AuditQuery,
      response: { 200: t.Object({ data: t.Array(AuditEntry), pagination: Pagination }), 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
      detail: {
        tags,
        summary: "The App's audit log, newest first (action auth.audit.list)",
        description:
          "Sign-ups, sign-ins and failed attempts, MFA events and admin changes of the App. Caller: a workspace API key or console session of the App's workspace " +
          "allowed auth.audit.list, or an M2M token of the App holding that permission; another workspace's credential gets 404. Send the same filters with every page's cursor; a malformed cursor is 400 INVALID_CURSOR.",
      },
    },
  );
}
