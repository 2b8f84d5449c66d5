/** Community-service test helpers: an owner with a key and a community, actors, and the lane's paths. */
import { ownerWithKey, type TestApp } from "./app";
import { ON_BINARY } from "./binary";
import { until } from "./until";

let seq = 0;
/** community id -> its owner's key, for eventsOf over HTTP on the binary. */
const ownerKeys = new Map<string, string>();

export async function communitySetup(app: TestApp) {
  const owner = await ownerWithKey(app);
  const r = await app.call("POST", `/social/v1/workspaces/${owner.ws.id}/communities`, { token: owner.token, body: { slug: `soc-${++seq}-${Date.now() % 100000}`, display_name: "Social" } });
  if (r.status !== 201) throw new Error(`community create failed: ${r.status} ${JSON.stringify(r.body)}`);
  const cid = r.body.id as string;
  ownerKeys.set(cid, owner.token);
  const base = `/social/v1/communities/${cid}`;
  const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => app.call(method, `${base}${path}`, { token: owner.token, body, headers });
  const actor = async (over: Record<string, unknown> = {}) => {
    const a = await call("POST", "/actors", { external_id: `ext-${++seq}`, display_name: `Actor ${seq}`, ...over });
    if (a.status !== 201) throw new Error(`actor upsert failed: ${a.status} ${JSON.stringify(a.body)}`);
    return a.body.actor as Record<string, any> & { id: string; external_id: string };
  };
  const counters = async (id: string) => (await call("GET", `/actors/${id}/counters`)).body as Record<string, any>;
  return { ...owner, community: r.body as { id: string; workspace_id: string; settings: Record<string, number> }, cid, base, call, actor, counters };
}

export type Social = Awaited<ReturnType<typeof communitySetup>>;

/** POST /posts, which must answer 201: the post. */
export async function createPost(s: Social, body: Record<string, unknown>) {
  const r = await s.call("POST", "/posts", body);
  if (r.status !== 201) throw new Error(`post failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** A key of the same workspace allowed only `actions`. */
export async function keyWith(app: TestApp, s: Social, actions: string[]): Promise<string> {
  const r = await app.call("POST", `/platform/v1/workspaces/${s.ws.slug}/api-keys`, { token: s.session, body: { name: `k-${++seq}`, policy: [{ effect: "allow", actions, resources: ["*"] }] } });
  if (r.status !== 201) throw new Error(`mint failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.key as string;
}

/** Every page of a list, following next_cursor until has_more is false. */
export async function allPages(s: Social, path: string, limit = 2): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  for (;;) {
    const sep = path.includes("?") ? "&" : "?";
    const r = await s.call("GET", `${path}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
    if (r.status !== 200) throw new Error(`page failed: ${r.status} ${JSON.stringify(r.body)}`);
    out.push(...r.body.data);
    if (!r.body.pagination.has_more) return out;
    cursor = r.body.pagination.next_cursor;
  }
}

/**
 * Events recorded (outbox) for a community, oldest first, optionally of types starting with `prefix`.
 * In-process: read from the outbox table. On the binary: read over HTTP from the community's
 * events log ({community}/webhooks/events, then each event's payload), once the process's
 * webhook pump has fanned its outbox out (bunker_webhook_backlog{stage="outbox"} 0 on /metrics).
 */
export async function eventsOf(app: TestApp, communityId: string, prefix = ""): Promise<{ type: string; data: any }[]> {
  if (ON_BINARY) return eventsOverHttp(app, communityId, prefix);
  const rows = await app.ctx.db.all<{ type: string; data: string }>(
    "SELECT type, data FROM core_events WHERE scope LIKE ? AND type LIKE ? ORDER BY created_at, id",
    `%${communityId}%`,
    `${prefix}%`,
  );
  return rows.map((r) => ({ type: r.type, data: JSON.parse(r.data) }));
}

async function eventsOverHttp(app: TestApp, communityId: string, prefix: string): Promise<{ type: string; data: any }[]> {
  const token = ownerKeys.get(communityId);
  if (!token) throw new Error(`eventsOf: community ${communityId} was not made by communitySetup in this file`);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const m = await app.call("GET", "/metrics");
    const pending = /^bunker_webhook_backlog\{stage="outbox"\} (\d+)$/m.exec(String(m.body))?.[1];
    if (pending === "0") break;
    if (Date.now() > deadline) throw new Error(`eventsOf: the webhook outbox did not drain within 10 s (${pending ?? "no gauge"})`);
    await Bun.sleep(20);
  }
  const log = `/social/v1/communities/${communityId}/webhooks/events`;
  const summaries: { id: string; type: string; is_test: boolean }[] = [];
  for (let cursor: string | null = null; ; ) {
    const r = await app.call("GET", `${log}?limit=100${cursor ? `&cursor=${cursor}` : ""}`, { token });
    if (r.status !== 200) throw new Error(`events log failed: ${r.status} ${JSON.stringify(r.body)}`);
    summaries.push(...r.body.data);
    if (!r.body.pagination.has_more) break;
    cursor = r.body.pagination.next_cursor;
  }
  const out: { type: string; data: any }[] = [];
  // Newest first there; oldest first here, as in the outbox.
  for (const e of summaries.reverse()) {
    if (e.is_test || !e.type.startsWith(prefix)) continue;
    const d = await app.call("GET", `${log}/${e.id}`, { token });
    if (d.status !== 200) throw new Error(`event read failed: ${d.status} ${JSON.stringify(d.body)}`);
    out.push({ type: e.type, data: d.body.payload.data });
  }
  return out;
}

/**
 * Polls `check` every 50 ms until it holds; throws after `timeoutMs`. For background work the
 * binary's own scheduler does (webhook deliveries, asset processing): never a fixed sleep.
 */
export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 15_000, what = "the condition"): Promise<void> {
  await until(what, check, timeoutMs);
}
