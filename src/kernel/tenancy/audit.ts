/** Audit trail of every mutation: who, what, on which target, from where, when (every product writes it through here; the platform serves it). */
import type { Principal } from "../../access/principal";
import { actorOf } from "../../access/principal";
import type { RequestMeta } from "../../access/http";
import type { Sql } from "../../core/db";
import { uuid } from "../../core/ids";
import type { AppContext } from "../../context";
import { insertAudit } from "./store";

export type { RequestMeta } from "../../access/http";

/** The cache-bus topic of platform data (core/cache-bus.ts). */
const TOPIC = "platform";

// Generation of platform data: every mutation is audited (house rule), so the audit write is
// the one place that knows "something changed". Read caches compare the generation and stay
// exact. It lives in the app's cache bus: moved at once here, and again on every node when
// the audited transaction commits (a read between the two may have cached the old row).
export const platformGeneration = (ctx: AppContext) => ctx.caches.generation(TOPIC);
/** Tells the read caches that platform rows changed (now, and again when t commits); audit() does it for every mutation. */
export const platformChanged = (t: Sql, ctx: AppContext) => ctx.caches.changed(t, TOPIC);

/** Writes the audit entry on t (the mutation's transaction, or the database). */
export async function audit(
  t: Sql,
  ctx: AppContext,
  entry: {
    actor: Principal | { actor_type: string; actor_id: string | null };
    action: string;
    workspaceId?: string | null;
    target?: { type: string; id: string } | null;
    meta?: RequestMeta;
    metadata?: Record<string, unknown>;
  },
): Promise<void> {
  await platformChanged(t, ctx);
  const actor = "kind" in entry.actor ? actorOf(entry.actor) : entry.actor;
  await insertAudit(t, {
    id: uuid(),
    workspace_id: entry.workspaceId ?? null,
    actor_type: actor.actor_type,
    actor_id: actor.actor_id,
    action: entry.action,
    target_type: entry.target?.type ?? null,
    target_id: entry.target?.id ?? null,
    ip: entry.meta?.ip ?? null,
    user_agent: entry.meta?.userAgent?.slice(0, 512) ?? null,
    metadata: JSON.stringify(entry.metadata ?? {}),
    created_at: ctx.clock.iso(),
  });
}
