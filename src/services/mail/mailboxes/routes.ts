/** Routes of the mailboxes part: /mail/v1/workspaces/{workspace_id}/mailboxes... */
import { Elysia } from "elysia";
import { principalPlugin } from "../../../access/http";
import { callerKey, idempotent } from "../../../access/idempotent";
import { PLATFORM_CALLER, secured } from "../../../access/openapi";
import { requirePrincipal } from "../../../access/principal";
import { noContent } from "../../../core/openapi";
import type { ServiceDeps } from "../../../kernel/module";
import { AttachmentParams, MailboxParams, ReceivedParams, WorkspaceParams } from "../schemas";
import { ErrorBody, Mailbox, MailboxCreate, MailboxList, MailboxListQuery, MailboxPatch, Received, ReceivedList, ReceivedListQuery } from "./schemas";
import { contentDisposition, type MailboxService } from "./service";
import type { MailboxView } from "./views";

const boxTags = ["Mail: mailboxes"];
const msgTags = ["Mail: received messages"];
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const wsParams = WorkspaceParams;
const boxParams = MailboxParams;
const msgParams = ReceivedParams;
const attParams = AttachmentParams;
const binary = (description: string, type = "application/octet-stream") => ({ 200: { description, content: { [type]: { schema: { type: "string" as const, format: "binary" } } } } });

export function mailboxRoutes(svc: MailboxService, deps: ServiceDeps) {
  return new Elysia({ prefix: "/mail/v1/workspaces/:workspace_id/mailboxes" })
    .use(principalPlugin(deps.tenancy.authz))
    .guard(secured(PLATFORM_CALLER))
    .post("", (c) => {
      const p = requirePrincipal(c.principal);
      return idempotent(deps.ctx.idempotency, c, callerKey(p), async () => ({ status: 201, body: await svc.create(p, c.params.workspace_id, c.body, c.meta) })) as Promise<MailboxView>;
    }, {
      params: wsParams,
      body: MailboxCreate,
      response: { 201: Mailbox, ...errors, 409: ErrorBody },
      detail: {
        tags: boxTags,
        summary: "Create a mailbox (action mail.mailbox.write)",
        description:
          "domain_id must be a domain of the workspace with intent receive or send_receive (400 DOMAIN_NOT_RECEIVING otherwise); mail arrives once the domain is active. " +
          "local_part: RFC 5321 dot-string, at most 64 characters, case-insensitive unique per domain (409 MAILBOX_EXISTS); prefixes bounces+ and bunker-test- are reserved. " +
          "retention_days 1-3650, default 30. Accepts Idempotency-Key (24 h).",
      },
    })
    .get("", (c) => svc.list(requirePrincipal(c.principal), c.params.workspace_id, c.query), {
      params: wsParams,
      query: MailboxListQuery,
      response: { 200: MailboxList, ...errors },
      detail: { tags: boxTags, summary: "List mailboxes in seq_id order (action mail.mailbox.read)", description: "Filters domain_id and status; deleted mailboxes are not listed." },
    })
    .get("/:id", (c) => svc.get(requirePrincipal(c.principal), c.params.workspace_id, c.params.id), {
      params: boxParams,
      response: { 200: Mailbox, ...errors },
      detail: { tags: boxTags, summary: "Read a mailbox (action mail.mailbox.read)" },
    })
    .patch("/:id", (c) => svc.update(requirePrincipal(c.principal), c.params.workspace_id, c.params.id, c.body, c.meta), {
      params: boxParams,
      body: MailboxPatch,
      response: { 200: Mailbox, ...errors },
      detail: {
        tags: boxTags,
        summary: "Change a mailbox (action mail.mailbox.write)",
        description: "display_name (null clears), retention_days (1-3650; applies to stored messages at the next purge), status active | disabled (disabled: RCPT answers 550, messages stay).",
      },
    })
    .delete("/:id", async (c) => {
      await svc.remove(requirePrincipal(c.principal), c.params.workspace_id, c.params.id, c.meta);
      c.set.status = 204;
    }, {
      params: boxParams,
      response: errors,
      detail: {
        tags: boxTags,
        summary: "Delete a mailbox (action mail.mailbox.write)",
        description: "Soft delete: mail to it is refused at once (550); its messages stay until the daily retention purge removes them; the address can be created again.",
        responses: noContent("Deleted"),
      },
    })
    .get("/:id/messages", (c) => svc.listMessages(requirePrincipal(c.principal), c.params.workspace_id, c.params.id, c.query), {
      params: boxParams,
      query: ReceivedListQuery,
      response: { 200: ReceivedList, ...errors },
      detail: {
        tags: msgTags,
        summary: "List received messages, newest first (action mail.mailbox.read)",
        description: "Filters from and subject (case-insensitive substrings), since (inclusive) and until (exclusive), unread. body_preview is null unless the caller holds mail.message.body.read.",
      },
    })
    .get("/:id/messages/:mid", (c) => svc.getMessage(requirePrincipal(c.principal), c.params.workspace_id, c.params.id, c.params.mid), {
      params: msgParams,
      response: { 200: Received, ...errors },
      detail: { tags: msgTags, summary: "One received message with its attachment manifest (action mail.mailbox.read)" },
    })
    .delete("/:id/messages/:mid", async (c) => {
      await svc.deleteMessage(requirePrincipal(c.principal), c.params.workspace_id, c.params.id, c.params.mid);
      c.set.status = 204;
    }, {
      params: msgParams,
      response: errors,
      detail: { tags: msgTags, summary: "Delete a received message (action mail.message.delete)", description: "Soft delete; the purge removes the row and the raw message with the mailbox's retention.", responses: noContent("Deleted") },
    })
    .post("/:id/messages/:mid/read", async (c) => {
      await svc.markRead(requirePrincipal(c.principal), c.params.workspace_id, c.params.id, c.params.mid);
      c.set.status = 204;
    }, {
      params: msgParams,
      response: errors,
      detail: { tags: msgTags, summary: "Mark a message read (action mail.mailbox.read)", description: "Sets read_at (the first time only).", responses: noContent("Marked read") },
    })
    .get("/:id/messages/:mid/raw", async (c) => {
      const { row, data } = await svc.raw(requirePrincipal(c.principal), c.params.workspace_id, c.params.id, c.params.mid);
      return new Response(new Uint8Array(data), {
        headers: {
          "content-type": "message/rfc822",
          "content-disposition": contentDisposition(`message-${row.seq}.eml`, "message.eml"),
          "x-content-type-options": "nosniff",
          "cache-control": "private, no-store",
        },
      });
    }, {
      params: msgParams,
      response: { ...errors, 410: ErrorBody },
      detail: { tags: msgTags, summary: "The raw message as received (.eml; actions mail.mailbox.read and mail.message.body.read)", responses: binary("The .eml, as an attachment", "message/rfc822") },
    })
    .get("/:id/messages/:mid/attachments/:position", async (c) => {
      const a = await svc.attachment(requirePrincipal(c.principal), c.params.workspace_id, c.params.id, c.params.mid, c.params.position);
      return new Response(new Uint8Array(a.data), {
        headers: {
          "content-type": a.contentType,
          "content-disposition": contentDisposition(a.filename, `attachment-${c.params.position}`),
          "x-content-type-options": "nosniff",
          "content-security-policy": "sandbox",
          "cache-control": "private, no-store",
        },
      });
    }, {
      params: attParams,
      response: { ...errors, 410: ErrorBody },
      detail: {
        tags: msgTags,
        summary: "Download an attachment (actions mail.mailbox.read and mail.message.body.read)",
        description: "position is the manifest's 0-based position. Served as an attachment with its content type, nosniff and a sandbox CSP.",
        responses: binary("The attachment's bytes"),
      },
    });
}
