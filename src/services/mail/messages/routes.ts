/**
 * Routes of the messages part, under /mail/v1/workspaces/{workspace_id}: the message log
 * (/messages, /messages/{id}, /body, export, settings, timeline), /deliverability and
 * /suppressions.
 */
import { Elysia } from "elysia";
import { principalPlugin } from "../../../access/http";
import { PLATFORM_CALLER, secured } from "../../../access/openapi";
import { requirePrincipal } from "../../../access/principal";
import { noContent } from "../../../core/openapi";
import type { ServiceDeps } from "../../../kernel/module";
import { MessageParams, WorkspaceParams } from "../schemas";
import {
  Deleted,
  Deliverability,
  DeliverabilityQuery,
  ErrorBody,
  ForgetQuery,
  Message,
  MessageBody,
  MessageExportQuery,
  MessageList,
  MessageListQuery,
  Settings,
  SettingsPatch,
  Suppression,
  SuppressionParams,
  SuppressionCreate,
  SuppressionList,
  SuppressionListQuery,
  Timeline,
  TimelineQuery,
} from "./schemas";
import { EXPORT_COLUMNS, EXPORTS_PER_HOUR } from "./export";
import type { MessageService } from "./service";

const BASE = "/mail/v1/workspaces/:workspace_id";
const logTags = ["Mail: messages"];
const supTags = ["Mail: suppressions"];
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const wsParams = WorkspaceParams;
const idParams = MessageParams;
const emailParams = SuppressionParams;

export function messageRoutes(svc: MessageService, deps: ServiceDeps) {
  return new Elysia({ name: "mail-messages-routes" })
    .use(principalPlugin(deps.tenancy.authz))
    .guard(secured(PLATFORM_CALLER))
    .get(`${BASE}/messages`, (c) => svc.list(requirePrincipal(c.principal), c.params.workspace_id, c.query), {
      params: wsParams,
      query: MessageListQuery,
      response: { 200: MessageList, ...errors },
      detail: {
        tags: logTags,
        summary: "List outbound messages, newest first (action mail.message.read)",
        description:
          "Filters: recipient (exact address), template, status, subject_contains (case-insensitive, % and _ literal, at most 200 characters); limit 1-100. " +
          "400 for anything else or a malformed cursor; follow-up pages keep the first page's filters (repeat them or omit them).",
      },
    })
    .delete(`${BASE}/messages`, (c) => svc.forget(requirePrincipal(c.principal), c.params.workspace_id, c.query.recipient), {
      params: wsParams,
      query: ForgetQuery,
      response: { 200: Deleted, ...errors },
      detail: {
        tags: logTags,
        summary: "Right to be forgotten: delete every message to an address (action mail.message.delete)",
        description: "recipient is required and matched case-insensitively; the rows and their stored bodies go. Suppressions of the address stay (so it is still not mailed).",
      },
    })
    .get(`${BASE}/messages/export`, (c) => svc.exportCsv(requirePrincipal(c.principal), c.params.workspace_id, c.query), {
      params: wsParams,
      query: MessageExportQuery,
      response: { ...errors, 429: ErrorBody },
      detail: {
        tags: logTags,
        summary: "Export the message log as CSV (action mail.message.read)",
        description:
          `Same filters as the list, every matching message newest first, streamed. Columns: ${EXPORT_COLUMNS.join(", ")} (no bodies). RFC 4180 quoting; ` +
          `text cells starting with = + - @ tab or CR get a leading apostrophe. One export at a time and ${EXPORTS_PER_HOUR} per hour per workspace: 429 EXPORT_LIMIT with Retry-After.`,
        responses: { 200: { description: "CSV stream", content: { "text/csv": { schema: { type: "string" } } } } },
      },
    })
    .get(`${BASE}/messages/settings`, (c) => svc.getSettings(requirePrincipal(c.principal), c.params.workspace_id), {
      params: wsParams,
      response: { 200: Settings, ...errors },
      detail: { tags: logTags, summary: "Message settings (action mail.message.read)" },
    })
    .patch(`${BASE}/messages/settings`, (c) => svc.patchSettings(requirePrincipal(c.principal), c.params.workspace_id, c.body), {
      params: wsParams,
      body: SettingsPatch,
      response: { 200: Settings, ...errors },
      detail: {
        tags: logTags,
        summary: "Change message settings (action mail.message.delete)",
        description: "redact_bodies is required. On: bodies of new messages are never stored and /body answers nulls for every message; off: stored bodies show again.",
      },
    })
    .get(`${BASE}/messages/timeline`, (c) => svc.timeline(requirePrincipal(c.principal), c.params.workspace_id, c.query), {
      params: wsParams,
      query: TimelineQuery,
      response: { 200: Timeline, ...errors },
      detail: {
        tags: logTags,
        summary: "Messages sent or bounced per UTC day (action mail.message.read)",
        description: "Dense daily buckets, zeros included, from since's day (inclusive) to until (exclusive); more than 366 buckets is 400.",
      },
    })
    .get(`${BASE}/messages/:id`, (c) => svc.get(requirePrincipal(c.principal), c.params.workspace_id, c.params.id), {
      params: idParams,
      response: { 200: Message, ...errors },
      detail: { tags: logTags, summary: "One message: metadata and verdicts, no body (action mail.message.read)" },
    })
    .get(`${BASE}/messages/:id/body`, (c) => svc.body(requirePrincipal(c.principal), c.params.workspace_id, c.params.id), {
      params: idParams,
      response: { 200: MessageBody, ...errors },
      detail: { tags: logTags, summary: "A message's content (action mail.message.body.read)", description: "body_html and body_text are null when redact_bodies is on." },
    })
    .get(`${BASE}/deliverability`, (c) => svc.deliverability(requirePrincipal(c.principal), c.params.workspace_id, c.query), {
      params: wsParams,
      query: DeliverabilityQuery,
      response: { 200: Deliverability, ...errors },
      detail: {
        tags: logTags,
        summary: "Deliverability verdict over the last window_days (action mail.message.read)",
        description: "window_days 1-90 (default 14). healthy needs recipient-side evidence (delivered); unconfirmed means mail left and nothing came back either way. Thresholds: the Mail guide (/docs/guides/mail), 'Deliverability thresholds'.",
      },
    })
    .get(`${BASE}/suppressions`, (c) => svc.listSuppressions(requirePrincipal(c.principal), c.params.workspace_id, c.query), {
      params: wsParams,
      query: SuppressionListQuery,
      response: { 200: SuppressionList, ...errors },
      detail: { tags: supTags, summary: "Suppressed addresses, newest first (action mail.suppression.read)", description: "Filter by reason; limit 1-100, cursor." },
    })
    .post(
      `${BASE}/suppressions`,
      async (c) => {
        const r = await svc.addSuppression(requirePrincipal(c.principal), c.params.workspace_id, c.body);
        c.set.status = r.created ? 201 : 200;
        return r.suppression;
      },
      {
        params: wsParams,
        body: SuppressionCreate,
        response: { 200: Suppression, 201: Suppression, ...errors },
        detail: {
          tags: supTags,
          summary: "Suppress an address (action mail.suppression.write)",
          description: "201 with the new entry (suppression.created); 200 with the existing entry, unchanged, when the address is already suppressed. reason: manual (default) or unsubscribe.",
        },
      },
    )
    .delete(
      `${BASE}/suppressions/:email`,
      async (c) => {
        await svc.removeSuppression(requirePrincipal(c.principal), c.params.workspace_id, c.params.email);
        c.set.status = 204;
      },
      {
        params: emailParams,
        detail: { tags: supTags, summary: "Remove an address from the suppression list (action mail.suppression.write); 204, 404 when absent", responses: noContent() },
      },
    );
}
