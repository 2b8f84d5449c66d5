/**
 * Routes of the sending part, under /mail/v1/workspaces/{workspace_id}:
 * /templates/{name}/send, /send-batch, /test-send and /sending/settings.
 */
import { Elysia } from "elysia";
import { principalPlugin } from "../../../access/http";
import { callerKey, idempotent } from "../../../access/idempotent";
import { PLATFORM_CALLER, secured } from "../../../access/openapi";
import { requirePrincipal } from "../../../access/principal";
import type { ServiceDeps } from "../../../kernel/module";
import { TemplateParams } from "../content/schemas";
import { WorkspaceParams } from "../schemas";
import { BatchBody, BatchResult, ErrorBody, SendAccepted, SendBody, SendSettings, SendSettingsPatch, TestSendBody } from "./schemas";
import { BATCH_MAX, DEFAULT_RATE_PER_SECOND, TO_MAX, type BatchResult as BatchView, type SendResult, type SendService } from "./service";

const BASE = "/mail/v1/workspaces/:workspace_id";
const tags = ["Mail: sending"];
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const named = TemplateParams;
const wsParams = WorkspaceParams;
const rateNote =
  `Rate limit per workspace, counted in messages over a sliding second (default ${DEFAULT_RATE_PER_SECOND}, PATCH /sending/settings): 429 RATE_LIMITED with Retry-After, ` +
  "X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset (seconds); accepted requests carry the X-RateLimit headers too.";

export function sendingRoutes(svc: SendService, deps: ServiceDeps) {
  return new Elysia({ name: "mail-sending-routes" })
    .use(principalPlugin(deps.tenancy.authz))
    .guard(secured(PLATFORM_CALLER))
    .post(
      `${BASE}/templates/:name/send`,
      (c) => {
        const p = requirePrincipal(c.principal);
        return idempotent(deps.ctx.idempotency, c, callerKey(p), async () => {
          const r = await svc.send(p, c.params.workspace_id, c.params.name, c.body, c.request.headers.get("idempotency-key"));
          return { status: 202, body: r.result, headers: r.headers };
        }) as Promise<SendResult>;
      },
      {
        params: named,
        body: SendBody,
        response: { 202: SendAccepted, ...errors, 409: ErrorBody, 422: ErrorBody, 429: ErrorBody },
        detail: {
          tags,
          summary: "Send a template (action mail.send); 202, delivered by the queue",
          description:
            `Renders the template with data (400 with one detail per variables_schema problem), queues one message per recipient (to: an address or up to ${TO_MAX}) and answers 202 without touching the network. ` +
            "422 SENDER_NOT_VERIFIED when from is not on an active sending domain of the workspace; 422 RECIPIENT_SUPPRESSED when any recipient is suppressed (nothing is queued). " +
            "Accepts Idempotency-Key (24 h): a replay answers the original response with Idempotent-Replay: true; the same key with another body is 409 IDEMPOTENCY_KEY_REUSE. " +
            rateNote,
        },
      },
    )
    .post(
      `${BASE}/templates/:name/send-batch`,
      (c) => {
        const p = requirePrincipal(c.principal);
        return idempotent(deps.ctx.idempotency, c, callerKey(p), async () => {
          const r = await svc.sendBatch(p, c.params.workspace_id, c.params.name, c.body);
          return { status: 202, body: r.result, headers: r.headers };
        }) as Promise<BatchView>;
      },
      {
        params: named,
        body: BatchBody,
        response: { 202: BatchResult, ...errors, 409: ErrorBody, 429: ErrorBody },
        detail: {
          tags,
          summary: "Send a template to up to 100 rows (action mail.send); 202 with a result per row",
          description:
            `1-${BATCH_MAX} rows {to, data, from?, subject?, headers?, idempotency_key?}; the top-level from, subject and headers are the rows' defaults. More rows: 400. ` +
            "Each row is accepted (message_id) or rejected (error: VALIDATION_ERROR, SENDER_NOT_VERIFIED, RECIPIENT_SUPPRESSED, TEMPLATE_* render errors); an unknown template is a 404 for the whole batch. " +
            "A row whose idempotency_key was used in the last 24 h is accepted with the earlier message's id and not sent again. The request also accepts an Idempotency-Key header. " +
            rateNote + " The accepted rows must all fit, otherwise nothing is queued.",
        },
      },
    )
    .post(
      `${BASE}/templates/:name/test-send`,
      async (c) => {
        const r = await svc.testSend(requirePrincipal(c.principal), c.params.workspace_id, c.params.name, c.body);
        c.set.status = 202;
        return r;
      },
      {
        params: named,
        body: TestSendBody,
        response: { 202: SendAccepted, ...errors, 422: ErrorBody },
        detail: {
          tags,
          summary: "Send a test of a template (action mail.send); 202",
          description:
            "Subject prefixed [TEST]; variables missing from data render as [varname] (no variables_schema errors); suppression and rate-limit checks are bypassed. " +
            "from must still be on an active sending domain (422 SENDER_NOT_VERIFIED). The message is queued and logged like any other.",
        },
      },
    )
    .get(`${BASE}/sending/settings`, (c) => svc.getSettings(requirePrincipal(c.principal), c.params.workspace_id), {
      params: wsParams,
      response: { 200: SendSettings, ...errors },
      detail: { tags, summary: "Read the send settings (action mail.message.read)", description: `rate_limit_per_second: messages per second for send and send-batch (default ${DEFAULT_RATE_PER_SECOND}).` },
    })
    .patch(`${BASE}/sending/settings`, (c) => svc.patchSettings(requirePrincipal(c.principal), c.params.workspace_id, c.body), {
      params: wsParams,
      body: SendSettingsPatch,
      response: { 200: SendSettings, ...errors },
      detail: { tags, summary: "Change the send rate limit (action mail.message.delete, like the message settings)", description: "rate_limit_per_second 1-10000, or null for the default." },
    });
}
