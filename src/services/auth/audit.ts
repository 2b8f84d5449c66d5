/**
 * The per-App audit log writer. Every sign-in (and failure), MFA event and admin change of
 * an App is recorded here, inside the transaction of the change when there is one.
 */
import type { RequestMeta } from "../../access/http";
import { uuid } from "../../core/ids";
import type { AppContext } from "../../context";
import { insertAuthAudit } from "./store/audit";

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

export function recordAuthAudit(ctx: AppContext, appId: string, e: AuthAuditEntry) {
  insertAuthAudit(ctx.db, {
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
