/**
 * The per-App audit log writer. Every sign-in (and failure), MFA event and admin change of
 * an App is recorded here, inside the transaction of the change when there is one: pass that
 * transaction's handle (or ctx.db outside one).
 */
import type { RequestMeta } from "../../../access/http";
import type { Sql } from "../../../core/db";
import { uuid } from "../../../core/ids";
import type { AppContext } from "../../../context";
import { insertAuthAudit } from "./store";

/** Who did it: an end user, an M2M client, a console account or workspace key, or the system. */
export interface AuthActor {
  type: "user" | "m2m_client" | "account" | "api_key" | "personal_token" | "system" | "anonymous";
  id: string | null;
}

export interface AuthAuditEntry {
  action: string;
  actor: AuthActor;
  outcome?: "success" | "failure";
  target?: { type: string; id: string } | null;
  meta?: RequestMeta | null;
  metadata?: Record<string, unknown>;
  /** When it happened, for entries written later than that (write-behind); default now. */
  at?: string;
}

/**
 * Topic of the caches of end-user state read on the token-check hot paths (live sessions and
 * their users, /me profiles: identity/sessions.ts, identity/me.ts). Every change to users,
 * sessions, tenants, memberships, roles or MFA factors writes an audit entry here, which
 * moves the topic (at once and again when its transaction commits, on every node:
 * core/cache-bus.ts), so those caches never serve a changed row. Changes nobody audits
 * (logout, refresh-token reuse) move it themselves.
 */
export const AUTH_USERS_TOPIC = "auth.users";

/** Audited actions that change nothing those caches hold: the frequent ones need not empty them. */
const LEAVES_CACHES = new Set([
  "user.signin",
  "user.signin.mfa_required",
  "user.create",
  "m2m.token",
  "verification.request",
  "verification.send",
  "user.password.reset_request",
  "mfa.code.send",
  "mfa.verify",
  "mfa.recover",
  "mfa.recovery_code.use",
  "mfa.recovery_codes.generate",
  "mfa.recovery_codes.regenerate",
  "mfa.factor.enrol",
  "mfa.step_up",
  "mfa.step_up.lock",
  "mfa.user.lock",
  "mfa.challenge.lock",
  "user.identity.link",
  "user.identity.unlink",
  "invite.create",
  "invite.revoke",
]);

/** Moves AUTH_USERS_TOPIC: here now, everywhere when t commits. */
export const authUsersChanged = (t: Sql, ctx: Pick<AppContext, "caches">) => ctx.caches.changed(t, AUTH_USERS_TOPIC);

/** Writes the entry with the handle t (the change's transaction, or ctx.db). */
export async function recordAuthAudit(t: Sql, ctx: Pick<AppContext, "clock" | "caches">, appId: string, e: AuthAuditEntry): Promise<void> {
  // A failure changes no state those caches hold (a burnt code, a locked challenge).
  if (e.outcome !== "failure" && !LEAVES_CACHES.has(e.action)) await authUsersChanged(t, ctx);
  await insertAuthAudit(t, {
    id: uuid(),
    app_id: appId,
    action: e.action,
    outcome: e.outcome ?? "success",
    actor_type: e.actor.type,
    actor_id: e.actor.id,
    target_type: e.target?.type ?? null,
    target_id: e.target?.id ?? null,
    ip: e.meta?.ip ?? null,
    user_agent: e.meta?.userAgent?.slice(0, 512) ?? null,
    metadata: JSON.stringify(e.metadata ?? {}),
    created_at: e.at ?? ctx.clock.iso(),
  });
}
