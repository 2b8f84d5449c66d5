import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { inProcess } from "../helpers/target";
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
    // c named no variant: she counts for the default one, whose page she was shown.
    expect(r.body.variants).toEqual([{ variant_id: v.id, name: "default", views: 4, signups: 3, conversion_rate: 0.75 }]);
    expect(r.body.top_referrers).toEqual([{ entry_id: a.body.id, email: "a@example.com", name: null, referral_code: a.body.referral_code, referral_count: 1 }]);
    expect(r.body.utm_sources).toEqual([{ source: "hn", signups: 2 }, { source: "x", signups: 1 }]);
    expect((await app.call("GET", `${w.base}/analytics?since=2026-01-01&until=2026-12-31`, { token: w.token })).body.daily).toHaveLength(365);
    expect((await app.call("GET", `${w.base}/analytics?since=2025-01-01&until=2026-12-31`, { token: w.token })).status).toBe(400);
    expect((await app.call("GET", `${w.base}/analytics?since=yesterday`, { token: w.token })).status).toBe(400);
  });

  test("sign-ups that name no variant count for the default variant, against its views (never a 0% row beside a 300% total)", async () => {
    const w = await createWaitlist(app);
    const def = (await app.call("GET", `${w.base}/variants`, { token: w.token })).body.data[0];
    // The default is the oldest variant, whatever it is called now; a second one gets views of its own.
    expect((await app.call("PATCH", `${w.base}/variants/${def.id}`, { token: w.token, body: { name: "original" } })).status).toBe(200);
    const bold = (await app.call("POST", `${w.base}/variants`, { token: w.token, body: { name: "bold", weight: 1 } })).body;
    const shown = { [def.id]: 0, [bold.id]: 0 } as Record<string, number>;
    for (let i = 0; i < 12; i++) shown[(await app.call("GET", `${w.pub}?visitor=t${i}`)).body.variant.id]! += 1;
    expect(shown[def.id]).toBeGreaterThan(2);
    expect(shown[bold.id]).toBeGreaterThan(0);
    // Three sign-ups from a form that posts no variant_id, one that names bold.
    for (const email of ["n1@example.com", "n2@example.com", "n3@example.com"]) expect((await join(app, w, { email })).status).toBe(201);
    expect((await join(app, w, { email: "b1@example.com", variant_id: bold.id })).status).toBe(201);
    const r = (await app.call("GET", `${w.base}/analytics`, { token: w.token })).body;
    const rate = (s: number, v: number) => Math.round((s / v) * 10000) / 10000;
    expect(r.variants).toEqual([
      { variant_id: def.id, name: "original", views: shown[def.id], signups: 3, conversion_rate: rate(3, shown[def.id]!) },
      { variant_id: bold.id, name: "bold", views: shown[bold.id], signups: 1, conversion_rate: rate(1, shown[bold.id]!) },
    ]);
    expect(r.totals).toMatchObject({ signups: 4, views: 12, conversion_rate: rate(4, 12) });

  });

  test("since and until are real calendar dates YYYY-MM-DD: anything else is 400 naming the field, and the OpenAPI says so", async () => {
    const w = await createWaitlist(app);
    const get = (qs: string) => app.call("GET", `${w.base}/analytics?${qs}`, { token: w.token });
    const bad = ["-1", "null", "true", "0", "1e309", "99999999999999999999", "", "%20", "2026-02-30", "2026-02-29", "2025-04-31", "2026-13-01", "2026-00-10", "2026-01-00", "2026-1-05", "0000-01-01", "+02026-01-01", "275760-09-13", "2026-01-01T00:00:00Z", "x".repeat(500)];
    for (const field of ["since", "until"]) {
      for (const v of bad) {
        const r = await get(`${field}=${v}`);
        expect([field, v, r.status, r.body.error?.code, r.body.error?.details?.map((d: any) => d.field)]).toEqual([field, v, 400, "VALIDATION_ERROR", [field]]);
      }
    }
    // The edges of the calendar that exist: leap days, month ends, the first and last years.
    for (const [since, until, days] of [["2028-02-29", "2028-03-01", 2], ["2000-02-29", "2000-02-29", 1], ["2026-04-30", "2026-05-01", 2], ["0001-01-01", "0001-01-31", 31], ["9999-12-31", "9999-12-31", 1]] as const) {
      const r = await get(`since=${since}&until=${until}`);
      expect([since, until, r.status, r.body.daily?.length, r.body.daily?.[0]?.date, r.body.daily?.at(-1)?.date]).toEqual([since, until, 200, days, since, until]);
    }
    // The default range ends at until; it starts no earlier than 0001-01-01.
    expect((await get("until=2026-03-01")).body).toMatchObject({ since: "2026-01-31", until: "2026-03-01" });
    expect((await get("until=0001-01-10")).body).toMatchObject({ since: "0001-01-01", until: "0001-01-10" });
    // The range rules are unchanged: until before since names until, over 366 days names since.
    expect((await get("since=2026-03-02&until=2026-03-01")).body.error.details).toEqual([{ field: "until", reason: "must not be before since" }]);
    expect((await get("since=2024-01-01&until=2024-12-31")).body.daily).toHaveLength(366);
    expect((await get("since=2024-01-01&until=2025-01-01")).body.error.details[0].field).toBe("since");

    const doc = await app.call("GET", "/docs/json");
    const params = doc.body.paths["/waitlist/v1/workspaces/{workspace_id}/waitlists/{waitlist_id}/analytics"].get.parameters;
    for (const name of ["since", "until"]) expect(params.find((p: any) => p.name === name).schema).toMatchObject({ type: "string", format: "date", pattern: expect.any(String) });
  });

  inProcess("sets the clock to the last minute of a day")("a sign-up in the last second of until counts in the range, on 9999-12-31 too", async () => {
    const w = await createWaitlist(app);
    const before = app.clock.nowMs();
    try {
      for (const day of ["2026-11-21", "9999-12-31"]) {
        app.clock.set(Date.parse(`${day}T23:59:59.999Z`));
        expect((await join(app, w, { email: `late-${day}@example.com` })).status).toBe(201);
        const r = await app.call("GET", `${w.base}/analytics?since=${day}&until=${day}`, { token: w.token });
        expect([day, r.status, r.body.totals?.signups, r.body.daily]).toEqual([day, 200, 1, [{ date: day, signups: 1, approvals: 0, rejections: 0, referrals: 0, views: 0 }]]);
      }
    } finally {
      app.clock.set(before);
    }
  });
});
