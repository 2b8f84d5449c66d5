/**
 * A workspace's suppression list: addresses mail is not sent to. The send routes check it
 * (suppressed()), delivery outcomes add bounced and complaining addresses (suppress()), and
 * the suppression routes list, add and remove entries.
 */
import type { Principal } from "../../../access/principal";
import { tx, type Sql } from "../../../core/db";
import { badRequest, invalidField, notFound } from "../../../core/errors";
import { buildPage, decodeCursor, parseLimit, type Page } from "../../../core/pagination";
import type { MailContext } from "../part-context";
import { EMAIL_MAX, EMAIL_RE } from "./limits";
import { badCursor, LIST_DEFAULT, LIST_MAX } from "./query";
import * as store from "./store";
import { SUPPRESSION_REASONS, type SuppressionReason, type SuppressionRow } from "./store";
import { foldEmail, suppressionView, type SuppressionView } from "./views";

const isReason = (v: unknown): v is SuppressionReason => typeof v === "string" && (SUPPRESSION_REASONS as readonly string[]).includes(v);

export class Suppressions {
  constructor(private readonly m: MailContext) {}

  /** True for each address (any case) on the workspace's suppression list. */
  async suppressed(db: Sql, workspaceId: string, emails: string[]): Promise<Set<string>> {
    return store.suppressedAmong(db, workspaceId, [...new Set(emails.map(foldEmail))]);
  }

  /** Adds a suppression unless the address has one; emits suppression.created when added. */
  async suppress(t: Sql, workspaceId: string, email: string, reason: SuppressionReason, sourceMessageId: string | null): Promise<boolean> {
    const row: SuppressionRow = { workspace_id: workspaceId, email: foldEmail(email), reason, source_message_id: sourceMessageId, created_at: this.m.ctx.clock.iso() };
    if (!(await store.insertSuppression(t, row))) return false;
    await this.m.emit(t, workspaceId, "suppression.created", { workspace_id: workspaceId, ...suppressionView(row) });
    return true;
  }

  async list(p: Principal, workspaceId: string, q: { limit?: unknown; cursor?: string; reason?: string }): Promise<Page<SuppressionView>> {
    const ws = await this.m.guard(p, workspaceId, "mail.suppression.read");
    const limit = parseLimit(q.limit, LIST_DEFAULT, LIST_MAX);
    let reason = q.reason === undefined || q.reason === "" ? null : q.reason;
    if (reason !== null && !isReason(reason)) throw invalidField("reason", `one of ${SUPPRESSION_REASONS.join(", ")}`);
    const c = decodeCursor<{ c?: unknown; e?: unknown; r?: unknown }>(q.cursor);
    if (c) {
      if (typeof c.c !== "string" || typeof c.e !== "string" || (c.r !== null && !isReason(c.r))) throw badCursor("not a cursor issued by this API");
      if (reason !== null && reason !== c.r) throw badCursor("the cursor belongs to another reason filter; start again without it");
      reason = c.r as string | null;
    }
    const rows = await store.listSuppressions(this.m.ctx.db, {
      workspaceId: ws.id,
      reason: reason as SuppressionReason | null,
      before: c ? { created_at: c.c as string, email: c.e as string } : null,
      limit: limit + 1,
    });
    return buildPage(rows, limit, (r) => ({ c: r.created_at, e: r.email, r: reason }), suppressionView);
  }

  /** Adds an address (lower-cased); an address already suppressed answers its entry unchanged (created false). */
  async add(p: Principal, workspaceId: string, body: { email?: unknown; reason?: unknown }): Promise<{ created: boolean; suppression: SuppressionView }> {
    const ws = await this.m.guard(p, workspaceId, "mail.suppression.write");
    const details: { field: string; reason: string }[] = [];
    const email = typeof body.email === "string" ? foldEmail(body.email) : "";
    if (!EMAIL_RE.test(email) || email.length > EMAIL_MAX) details.push({ field: "email", reason: "must be an email address" });
    const reason = body.reason === undefined ? "manual" : body.reason;
    if (reason !== "manual" && reason !== "unsubscribe") details.push({ field: "reason", reason: "manual or unsubscribe (bounce and complaint are added by the service)" });
    if (details.length) throw badRequest("Invalid suppression", details);
    return tx(this.m.ctx.db, async (t) => {
      const created = await this.suppress(t, ws.id, email, reason as SuppressionReason, null);
      return { created, suppression: suppressionView((await store.suppression(t, ws.id, email))!) };
    });
  }

  async remove(p: Principal, workspaceId: string, email: string): Promise<void> {
    const ws = await this.m.guard(p, workspaceId, "mail.suppression.write");
    const fold = foldEmail(decodeURIComponentSafe(email));
    await tx(this.m.ctx.db, async (t) => {
      const r = await store.suppression(t, ws.id, fold);
      if (!r) throw notFound("Suppression");
      await store.deleteSuppression(t, ws.id, fold);
      await this.m.emit(t, ws.id, "suppression.deleted", { workspace_id: ws.id, ...suppressionView(r), deleted_at: this.m.ctx.clock.iso() });
    });
  }
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
