import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { createWaitlist, join } from "../helpers/waitlist";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ WAITLIST_SIGNUPS_PER_IP_PER_MINUTE: "1000" });
});
afterAll(() => app.stop());

describe("variants", () => {
  test("default variant provisioned; CRUD; name conflicts; stable choice per visitor token; weights; inactive not served", async () => {
    const w = await createWaitlist(app);
    const list = await app.call("GET", `${w.base}/variants`, { token: w.token });
    expect(list.body.data).toHaveLength(1);
    const def = list.body.data[0];
    expect(def).toMatchObject({ name: "default", weight: 1, active: true });
    const b = await app.call("POST", `${w.base}/variants`, { token: w.token, body: { name: "bold", display_name: "Join the future", cta_text: "Get early access", weight: 3 } });
    expect(b.status).toBe(201);
    expect((await app.call("POST", `${w.base}/variants`, { token: w.token, body: { name: "bold" } })).body.error.code).toBe("VARIANT_NAME_TAKEN");
    expect((await app.call("POST", `${w.base}/variants`, { token: w.token, body: { name: "Bad Name" } })).status).toBe(400);

    const seen = new Map<string, number>();
    for (let i = 0; i < 200; i++) {
      const g = await app.call("GET", `${w.pub}?visitor=v${i}`);
      seen.set(g.body.variant.name, (seen.get(g.body.variant.name) ?? 0) + 1);
      // Same token, same variant.
      if (i < 5) expect((await app.call("GET", `${w.pub}?visitor=v${i}`)).body.variant.id).toBe(g.body.variant.id);
    }
    // Weights 1:3 (a stable hash, so the split is fixed for these tokens: roughly a quarter).
    expect(seen.get("bold")!).toBeGreaterThan(120);
    expect(seen.get("default")!).toBeGreaterThan(20);

    const p = await app.call("PATCH", `${w.base}/variants/${def.id}`, { token: w.token, body: { active: false } });
    expect(p.body.active).toBe(false);
    for (let i = 0; i < 10; i++) expect((await app.call("GET", `${w.pub}?visitor=x${i}`)).body.variant.name).toBe("bold");
    // A sign-up names the variant it was shown; an inactive one is 400.
    expect((await join(app, w, { email: "v1@example.com", variant_id: def.id })).status).toBe(400);
    expect((await join(app, w, { email: "v1@example.com", variant_id: b.body.id })).status).toBe(201);
    expect((await app.call("DELETE", `${w.base}/variants/${def.id}`, { token: w.token })).status).toBe(204);
    expect((await app.call("DELETE", `${w.base}/variants/${def.id}`, { token: w.token })).status).toBe(404);
  });
});

describe("analytics", () => {
  test("daily sign-ups, decisions, referrals, views per variant with conversion rate, top referrers, utm sources", async () => {
    const w = await createWaitlist(app);
    const v = (await app.call("GET", `${w.base}/variants`, { token: w.token })).body.data[0];
    for (let i = 0; i < 4; i++) await app.call("GET", w.pub);
    const a = await join(app, w, { email: "a@example.com", variant_id: v.id, utm: { source: "hn" } });
    await join(app, w, { email: "b@example.com", referral_code: a.body.referral_code, variant_id: v.id, utm: { source: "hn" } });
    const c = await join(app, w, { email: "c@example.com", utm: { source: "x" } });
    await app.call("POST", `${w.base}/entries/${c.body.id}/approve`, { token: w.token });
    const r = await app.call("GET", `${w.base}/analytics`, { token: w.token });
    expect(r.status).toBe(200);
    const today = new Date(app.clock.now()).toISOString().slice(0, 10);
    expect(r.body.until).toBe(today);
    expect(r.body.daily).toHaveLength(30);
    expect(r.body.daily.at(-1)).toEqual({ date: today, signups: 3, approvals: 1, rejections: 0, referrals: 1, views: 4 });
    expect(r.body.totals).toMatchObject({ signups: 3, views: 4, conversion_rate: 0.75 });
    expect(r.body.variants).toContainEqual({ variant_id: v.id, name: "default", views: 4, signups: 2, conversion_rate: 0.5 });
    expect(r.body.top_referrers).toEqual([{ entry_id: a.body.id, email: "a@example.com", name: null, referral_code: a.body.referral_code, referral_count: 1 }]);
    expect(r.body.utm_sources).toEqual([{ source: "hn", signups: 2 }, { source: "x", signups: 1 }]);
    expect((await app.call("GET", `${w.base}/analytics?since=2026-01-01&until=2026-12-31`, { token: w.token })).body.daily).toHaveLength(365);
    expect((await app.call("GET", `${w.base}/analytics?since=2025-01-01&until=2026-12-31`, { token: w.token })).status).toBe(400);
    expect((await app.call("GET", `${w.base}/analytics?since=yesterday`, { token: w.token })).status).toBe(400);
  });
});
