/** Route of the inbound part: /mail/v1/workspaces/{workspace_id}/inbound-reports (the bounce and complaint report log). */
import { Elysia } from "elysia";
import { t } from "../../../core/schema";
import { principalPlugin } from "../../../access/http";
import { PLATFORM_CALLER, secured } from "../../../access/openapi";
import { requirePrincipal } from "../../../access/principal";
import { ErrorBody, Pagination } from "../../../access/schemas";
import type { ServiceDeps } from "../../../kernel/module";
import { WorkspaceParams } from "../schemas";
import type { InboundService } from "./service";

const N = t.Nullable;
const Report = t.Object({
  id: t.String(),
  message_id: N(t.String({ description: "The outbound message of the VERP address" })),
  kind: t.UnionEnum(["dsn", "arf", "unparsed"], { description: "dsn: bounce or delivery report (RFC 3464 or a provider's bounce text); arf: complaint (RFC 5965); unparsed: neither" }),
  action: N(t.String({ description: "failed | delayed | delivered | relayed | expanded | complaint" })),
  status_code: N(t.String({ description: "Enhanced status code, e.g. 5.1.1" })),
  detail: N(t.String()),
  applied: t.Boolean({ description: "It changed the message's status" }),
  received_at: t.String({ format: "date-time" }),
});
const ReportList = t.Object({
  data: t.Array(Report),
  pagination: Pagination,
  counts: t.Object({ window_days: t.Integer(), dsn: t.Integer(), arf: t.Integer(), unparsed: t.Integer(), applied: t.Integer() }, { description: "Reports of the last 30 days by kind" }),
});

export function inboundRoutes(svc: InboundService, deps: ServiceDeps) {
  return new Elysia({ name: "mail-inbound-routes" })
    .use(principalPlugin(deps.tenancy.authz))
    .guard(secured(PLATFORM_CALLER))
    .get("/mail/v1/workspaces/:workspace_id/inbound-reports", (c) => svc.listReports(requirePrincipal(c.principal), c.params.workspace_id, c.query), {
      params: WorkspaceParams,
      query: t.Object({ kind: t.Optional(t.String({ description: "dsn | arf | unparsed" })), limit: t.Optional(t.QueryInteger({ description: "1-100, default 20" })), cursor: t.Optional(t.String()) }),
      response: { 200: ReportList, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
      detail: {
        tags: ["Mail: messages"],
        summary: "Bounce and complaint reports received at VERP addresses (action mail.message.read)",
        description: "Newest first; unparseable reports are kept (raw message in the object store, 90 days) and counted. Filter kind.",
      },
    });
}
