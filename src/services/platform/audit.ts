/** Audit trail of every mutation: who, what, on which target, from where, when. */
import type { Principal } from "../../access/principal";
import { actorOf } from "../../access/principal";
import type { RequestMeta } from "../../access/http";
import { uuid } from "../../core/ids";
import type { AppContext } from "../../context";
import { insertAudit } from "./store/audit";

export type { RequestMeta } from "../../access/http";

// Generation of platform data per app: every mutation is audited (house rule), so the
// audit write is the one place that knows "something changed". Read caches compare it
// and stay exact. Keyed by context, so isolated apps in one process never share it.
const generations = new WeakMap<AppContext, number>();
export const platformGeneration = (ctx: AppContext) => generations.get(ctx) ?? 0;
/** Tells the read caches that platform rows changed; audit() does it for every mutation. */
export const platformChanged = (ctx: AppContext) => void generations.set(ctx, platformGeneration(ctx) + 1);

export function audit(
  ctx: AppContext,
  entry: {
    actor: Principal | { actor_type: string; actor_id: string | null };
    action: string;
    workspaceId?: string | null;
    target?: { type: string; id: string } | null;
    meta?: RequestMeta;
    metadata?: Record<string, unknown>;
  },
) {
  platformChanged(ctx);
  const actor = "kind" in entry.actor ? actorOf(entry.actor) : entry.actor;
  insertAudit(ctx.db, {
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
