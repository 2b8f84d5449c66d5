/**
 * The message log as the API shows it: the paged list with filters, one message, its body,
 * the right-to-be-forgotten delete, and the workspace's message settings (body redaction).
 */
import type { Principal } from "../../../access/principal";
import { tx, type Sql } from "../../../core/db";
import { invalidField, notFound } from "../../../core/errors";
import { buildPage, decodeCursor, parseLimit, type Page } from "../../../core/pagination";
import { readBody } from "./bodies";
import type { MailContext } from "../part-context";
import { badCursor, filterOf, LIST_DEFAULT, LIST_MAX, parseFilters, RECIPIENT_MAX, type Filters, type MessageQuery } from "./query";
import * as store from "./store";
import type { MessageRow } from "./store";
import { foldEmail, messageBodyView, messageView, type MessageBodyView, type MessageView } from "./views";

export class MessageLog {
  constructor(private readonly m: MailContext) {}

  async list(p: Principal, workspaceId: string, q: MessageQuery): Promise<Page<MessageView>> {
    const ws = await this.m.guard(p, workspaceId, "mail.message.read");
    const limit = parseLimit(q.limit, LIST_DEFAULT, LIST_MAX);
    let f = parseFilters(q);
    const c = decodeCursor<{ c?: unknown; id?: unknown; f?: unknown }>(q.cursor);
    if (c) {
      const cf = c.f as Filters | undefined;
      if (typeof c.c !== "string" || typeof c.id !== "string" || !cf || typeof cf !== "object") throw badCursor("not a cursor issued by this API");
      // Follow-up pages keep the first page's filters: omitted ones come from the cursor, different ones are refused.
      for (const k of ["recipient", "template", "status", "subject"] as const) {
        if (f[k] !== null && f[k] !== cf[k]) throw badCursor("the cursor belongs to other filters; start again without it");
      }
      f = parseFilters({ recipient: cf.recipient ?? undefined, template: cf.template ?? undefined, status: cf.status ?? undefined, subject_contains: cf.subject ?? undefined });
    }
    const rows = await store.listMessages(this.m.ctx.db, filterOf(ws.id, f, c ? { created_at: c.c as string, id: c.id as string } : null, limit + 1));
    return buildPage(rows, limit, (r) => ({ c: r.created_at, id: r.id, f }), (r) => messageView(r));
  }

  /** A message of the path: a UUID of any case (the route schema's check). */
  private async inWorkspace(db: Sql, workspaceId: string, id: string): Promise<MessageRow> {
    const r = await store.messageInWorkspace(db, workspaceId, id.toLowerCase());
    if (!r) throw notFound("Message");
    return r;
  }

  async get(p: Principal, workspaceId: string, id: string): Promise<MessageView> {
    const ws = await this.m.guard(p, workspaceId, "mail.message.read");
    return messageView(await this.inWorkspace(this.m.ctx.db, ws.id, id));
  }

  async body(p: Principal, workspaceId: string, id: string): Promise<MessageBodyView> {
    const ws = await this.m.guard(p, workspaceId, "mail.message.body.read");
    const r = await this.inWorkspace(this.m.ctx.db, ws.id, id);
    if (await store.redactBodies(this.m.ctx.db, ws.id)) return messageBodyView(r, null);
    return messageBodyView(r, await readBody(this.m.ctx, r));
  }

  /** Right to be forgotten: every message to the address (any case), with its body objects. */
  async forget(p: Principal, workspaceId: string, recipient: string | undefined): Promise<{ deleted: number }> {
    const ws = await this.m.guard(p, workspaceId, "mail.message.delete");
    if (recipient === undefined || recipient.trim() === "") throw invalidField("recipient", "required");
    if (recipient.length > RECIPIENT_MAX) throw invalidField("recipient", `at most ${RECIPIENT_MAX} characters`);
    const fold = foldEmail(recipient);
    // Bodies first: a crash in between leaves rows whose bodies read as null, never bodies without rows.
    const doomed = await store.messagesToRecipient(this.m.ctx.db, ws.id, fold);
    for (const m of doomed) if (m.body_key) await this.m.ctx.objects.delete(m.body_key);
    const deleted = await tx(this.m.ctx.db, async (t) => {
      // Messages queued meanwhile: their bodies too.
      for (const m of await store.messagesToRecipient(t, ws.id, fold)) if (m.body_key && !doomed.some((d) => d.id === m.id)) await this.m.ctx.objects.delete(m.body_key);
      return store.deleteMessagesToRecipient(t, ws.id, fold);
    });
    return { deleted };
  }

  async getSettings(p: Principal, workspaceId: string) {
    const ws = await this.m.guard(p, workspaceId, "mail.message.read");
    return { workspace_id: ws.id, redact_bodies: await store.redactBodies(this.m.ctx.db, ws.id) };
  }

  async patchSettings(p: Principal, workspaceId: string, body: { redact_bodies?: unknown }) {
    const ws = await this.m.guard(p, workspaceId, "mail.message.delete");
    if (typeof body.redact_bodies !== "boolean") throw invalidField("redact_bodies", "required boolean");
    await store.setRedactBodies(this.m.ctx.db, ws.id, body.redact_bodies, this.m.ctx.clock.iso());
    return { workspace_id: ws.id, redact_bodies: body.redact_bodies };
  }
}
