/**
 * Message bodies ({html, text}) live in the object store, not in the message rows: written
 * by the send queue (unless the workspace redacts bodies), read by the delivery worker and
 * GET .../body, deleted with their workspace or by the right-to-be-forgotten delete.
 */
import type { AppContext } from "../../../context";
import type { Sql } from "../../../core/db";
import * as store from "./store";
import type { MessageRow } from "./store";

export const bodyKey = (workspaceId: string, id: string) => `mail/messages/${workspaceId}/${id}.json`;

/** The stored body of a message ({html, text}), or nulls when none was stored or it is gone. */
export async function readBody(ctx: AppContext, r: MessageRow): Promise<{ html: string | null; text: string | null }> {
  if (!r.body_key) return { html: null, text: null };
  const o = await ctx.objects.get(r.body_key);
  if (!o) return { html: null, text: null };
  const v = JSON.parse(new TextDecoder().decode(o.data)) as { html?: string | null; text?: string | null };
  return { html: v.html ?? null, text: v.text ?? null };
}

/**
 * Inside the workspace-deleting transaction t: its message rows go by foreign key; their
 * bodies in the object store are deleted once that commits (a rollback keeps them).
 */
export async function dropWorkspaceBodies(ctx: AppContext, t: Sql, workspaceId: string): Promise<void> {
  const keys = await store.bodyKeysOfWorkspace(t, workspaceId);
  if (!keys.length) return;
  t.afterCommit(async () => {
    for (const k of keys) await ctx.objects.delete(k).catch((err) => ctx.log.warn("mail body not deleted with its workspace", { key: k, error: String(err) }));
  });
}
