/**
 * The waitlist's notification outbox. A sign-up, approval or rejection inserts a row in its own
 * transaction (so it exists only if the change committed) and kicks the job after commit; the
 * job (waitlist.notify, also every 30 s) claims due rows with a lease and carries them out:
 * - approved: with default_auth_app_slug set, an Auth invite for the entry's email through the
 *   Auth service (once: invited_at and invited_to_app_slug are set, entry.invited is emitted);
 *   with notifications_via_mail, the approved template through the mail service;
 * - welcome / rejected: the welcome / rejected template when notifications_via_mail is on.
 * A failure never touches the entry's decision: the row is retried with exponential backoff
 * (30 s doubling, at most 1 h apart) up to MAX_ATTEMPTS, then marked failed with last_error.
 * The invite's outcome is also kept on the entry (its `invite`: pending, sent, failed with the
 * error), because the outbox is not visible to API users: a refusal by the Auth App (a 4xx such
 * as EMAIL_TAKEN) cannot succeed on a retry, so it fails the row at once; a failed invite emits
 * entry.invite_failed (and no approved mail goes out: it would carry no invite).
 * Mail is at-least-once: a crash between queueing the mail and marking the row repeats it.
 */
import { HOUR, MINUTE, SECOND } from "../../../core/clock";
import { tx, type Sql } from "../../../core/db";
import { ApiError } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import type { AppContext } from "../../../context";
import type { Bridges } from "../bridges";
import { entryView } from "./views";
import { parseWaitlistSettings } from "../settings";
import * as store from "./store";
import { type Notifier, settingsOf, waitlistById } from "../waitlists";
import type { WaitlistContext } from "../events";

export type NotificationKind = "welcome" | "approved" | "rejected";
export const NOTIFY_JOB = "waitlist.notify";
export const MAX_ATTEMPTS = 8;
const LEASE_MS = 5 * MINUTE;
const BATCH = 20;

type NotificationRow = store.NotificationRow;

/** In t: queues a notification when the workspace's settings call for one. */
export async function enqueueNotification(t: Sql, ctx: AppContext, notifier: Notifier, n: { workspace_id: string; waitlist_id: string; entry_id: string; kind: NotificationKind }): Promise<void> {
  const s = await settingsOf(t, n.workspace_id);
  const mail = !!s?.notifications_via_mail;
  if (!mail && !(n.kind === "approved" && s?.default_auth_app_slug)) return;
  const now = ctx.clock.iso();
  await store.insertNotification(t, { id: uuid(), ...n, due: ctx.clock.nowMs(), at: now });
  if (n.kind === "approved" && s?.default_auth_app_slug) {
    await store.updateEntry(t, n.entry_id, { ...inviteState("pending", 0, null, now), invite_app_slug: s.default_auth_app_slug }, now);
  }
  t.afterCommit(() => notifier.kick());
}

/** The invite columns of an entry for an outcome (the app slug apart). */
const inviteState = (status: store.InviteStatus, attempts: number, error: InviteFailure | null, at: string): Partial<store.EntryRow> => ({
  invite_status: status,
  invite_attempts: attempts,
  invite_error_code: error?.code ?? null,
  invite_error_message: error?.message ?? null,
  invite_updated_at: at,
});

/**
 * Why an invite was not made: `permanent` when the Auth App refused it (a 4xx other than 408
 * and 429: the same request cannot succeed later), else temporary (retried). Anything but an
 * API refusal shows as INTERNAL_ERROR with a fixed message; the log has the original.
 */
export class InviteFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly permanent: boolean,
    readonly original: unknown = null,
  ) {
    super(message);
  }

  static from(e: unknown): InviteFailure {
    if (e instanceof InviteFailure) return e;
    if (e instanceof ApiError) return new InviteFailure(e.code, e.message, e.status >= 400 && e.status < 500 && e.status !== 408 && e.status !== 429, e);
    return new InviteFailure("INTERNAL_ERROR", "The Auth invite could not be created (an internal error; retried with backoff)", false, e);
  }
}

export const notificationsOf = store.notificationsOf;

export class NotificationWorker implements Notifier {
  constructor(
    private readonly m: WaitlistContext,
    private readonly bridges: Bridges,
  ) {}

  kick(): void {
    this.m.ctx.scheduler.runNow(NOTIFY_JOB).catch((e: Error) => this.m.ctx.log.warn("waitlist notify run failed", { error: e.message }));
  }

  /** Claims and carries out due notifications; returns how many were handled. */
  async runDue(): Promise<number> {
    let handled = 0;
    for (let round = 0; round < 10; round++) {
      const now = this.m.ctx.clock.nowMs();
      const claimed = await tx(this.m.ctx.db, (t) => store.claimNotifications(t, now, now + LEASE_MS, BATCH));
      for (const r of claimed) await this.handle({ ...r, attempts: Number(r.attempts) + 1 });
      handled += claimed.length;
      if (claimed.length < BATCH) break;
    }
    return handled;
  }

  private async finish(db: Sql, id: string, fields: { state: string; next?: number; error?: string | null }): Promise<void> {
    await store.finishNotification(db, id, fields.state, fields.next ?? this.m.ctx.clock.nowMs(), fields.error ?? null, this.m.ctx.clock.iso());
  }

  private async handle(n: NotificationRow): Promise<void> {
    try {
      await this.carryOut(n);
      await this.finish(this.m.ctx.db, n.id, { state: "done" });
    } catch (e) {
      const invite = e instanceof InviteFailure ? e : null;
      const cause = invite?.original ?? e;
      const message = (cause as Error)?.message ?? String(cause);
      const final = !!invite?.permanent || n.attempts >= MAX_ATTEMPTS;
      const delay = Math.min(HOUR, 30 * SECOND * 2 ** (n.attempts - 1));
      await tx(this.m.ctx.db, async (t) => {
        await this.finish(t, n.id, { state: final ? "failed" : "pending", next: this.m.ctx.clock.nowMs() + delay, error: message.slice(0, 500) });
        if (invite) await this.inviteFailed(t, n, invite, final);
      });
      this.m.ctx.log.warn("waitlist notification failed", { id: n.id, kind: n.kind, attempts: n.attempts, final, error: message, ...(invite ? { invite_error: invite.code } : {}) });
    }
  }

  /** In t: the entry shows the failed attempt (still pending while it is retried); a final one emits entry.invite_failed. */
  private async inviteFailed(t: Sql, n: NotificationRow, failure: InviteFailure, final: boolean): Promise<void> {
    const w = await waitlistById(t, n.waitlist_id);
    const entry = w ? await store.entryById(t, w.id, n.entry_id) : null;
    if (!w || !entry) return;
    const at = this.m.ctx.clock.iso();
    await store.updateEntry(t, entry.id, inviteState(final ? "failed" : "pending", n.attempts, failure, at), at);
    if (final) await this.m.emit(t, w.workspace_id, "entry.invite_failed", entryView((await store.entryById(t, w.id, entry.id))!, null));
  }

  /** The Auth invite for an entry, through the bridge; every failure as an InviteFailure. */
  private async createInvite(workspaceId: string, appSlug: string | null, email: string) {
    if (!appSlug) throw new InviteFailure("AUTH_APP_NOT_SET", "The workspace's waitlist settings no longer name an Auth App (default_auth_app_slug)", true);
    try {
      const app = await this.bridges.app(workspaceId, appSlug);
      if (!app) throw new InviteFailure("AUTH_APP_NOT_FOUND", `Auth App ${appSlug} is not an App of this workspace`, true);
      return { app, invite: await this.bridges.invite(app, email) };
    } catch (e) {
      throw InviteFailure.from(e);
    }
  }

  private async carryOut(n: NotificationRow): Promise<void> {
    const db = this.m.ctx.db;
    const w = await waitlistById(db, n.waitlist_id);
    const entry = w ? await store.entryById(db, w.id, n.entry_id) : null;
    if (!w || !entry) return; // deleted since: nothing to tell anyone
    const s = await settingsOf(db, n.workspace_id);
    let code = n.invite_code ? this.m.ctx.secretBox.decrypt(n.invite_code) : null;
    let appSlug = entry.invited_to_app_slug;
    // An entry whose invite is pending is invited even if the settings dropped the App since (it then fails, visibly).
    if (n.kind === "approved" && !entry.invited_at && (s?.default_auth_app_slug || entry.invite_status === "pending")) {
      const { app, invite } = await this.createInvite(n.workspace_id, s?.default_auth_app_slug ?? null, entry.email);
      code = invite.code;
      appSlug = app.slug;
      await tx(db, async (t) => {
        const at = this.m.ctx.clock.iso();
        await store.updateEntry(t, entry.id, { invited_at: at, invited_to_app_slug: app.slug, invite_app_slug: app.slug, ...inviteState("sent", n.attempts, null, at) }, at);
        await store.keepInviteCode(t, n.id, this.m.ctx.secretBox.encrypt(invite.code));
        const after = (await store.entryById(t, w.id, entry.id))!;
        await this.m.emit(t, w.workspace_id, "entry.invited", entryView(after, null));
      });
    }
    if (!s?.notifications_via_mail) return;
    const template = n.kind === "welcome" ? s.welcome_template_name : n.kind === "approved" ? s.approved_template_name : s.rejected_template_name;
    if (!template || !s.default_sender_address) throw new Error(`notifications_via_mail is on but the ${n.kind} template or the sender address is not set`);
    const ws = parseWaitlistSettings(w.settings);
    const link = code && ws.invite_accept_url ? withCode(ws.invite_accept_url, code) : null;
    const from = s.brand_name ? `${s.brand_name.replace(/["<>\r\n]/g, "")} <${s.default_sender_address}>` : s.default_sender_address;
    await this.bridges.send(n.workspace_id, template, {
      from,
      to: entry.email,
      data: {
        entry: { email: entry.email, name: entry.name, referral_code: entry.referral_code, referral_count: Number(entry.referral_count), status: entry.status },
        waitlist: { display_name: w.display_name, slug: w.slug, description: w.description },
        // Not "brand": templates get the mail brand tokens under that name.
        waitlist_brand: { name: s.brand_name, logo_url: s.brand_logo_url, primary_color: s.primary_color },
        invite_link: link,
        invite_code: code,
        invited_to_app_slug: appSlug,
      },
    });
  }
}

function withCode(url: string, code: string): string {
  const u = new URL(url);
  u.searchParams.set("invite_code", code);
  return u.toString();
}
