/** Waitlist test helpers: an owner with a waitlist (optionally open) and public sign-up calls. */
import { ownerWithKey, type TestApp } from "./app";

let seq = 0;

export interface TestWaitlist {
  token: string;
  ws: { id: string; slug: string };
  id: string;
  slug: string;
  /** "/waitlist/v1/workspaces/<ws>/waitlists/<id>" */
  base: string;
  /** "/waitlist/v1/waitlists/<ws slug>/<slug>" */
  pub: string;
}

export async function createWaitlist(app: TestApp, opts: { settings?: Record<string, unknown>; open?: boolean; owner?: { token: string; ws: { id: string; slug: string } } } = {}): Promise<TestWaitlist> {
  const { token, ws } = opts.owner ?? (await ownerWithKey(app));
  const slug = `wl-${++seq}`;
  const r = await app.call("POST", `/waitlist/v1/workspaces/${ws.id}/waitlists`, { token, body: { slug, display_name: `Waitlist ${seq}`, settings: opts.settings } });
  if (r.status !== 201) throw new Error(`waitlist create: ${r.status} ${JSON.stringify(r.body)}`);
  const base = `/waitlist/v1/workspaces/${ws.id}/waitlists/${r.body.id}`;
  if (opts.open !== false) {
    const s = await app.call("PATCH", `${base}/status`, { token, body: { status: "open" } });
    if (s.status !== 200) throw new Error(`open: ${s.status} ${JSON.stringify(s.body)}`);
  }
  return { token, ws, id: r.body.id, slug, base, pub: `/waitlist/v1/waitlists/${ws.slug}/${slug}` };
}

export function join(app: TestApp, w: TestWaitlist, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return app.call("POST", `${w.pub}/entries`, { body, headers });
}
