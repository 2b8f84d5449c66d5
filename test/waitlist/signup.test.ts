import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { createWaitlist, join } from "../helpers/waitlist";
import { inProcess } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

describe("public sign-up", () => {
  test("201 with the public view only; a repeated email is 200 with the same entry and no duplicate", async () => {
    const w = await createWaitlist(app, { settings: { confirmation_message: "Thanks!" } });
    const a = await join(app, w, { email: "Ada@Example.com", name: "Ada", utm: { source: "hn" } }, { origin: "https://acme.example" });
    expect(a.status).toBe(201);
    expect(Object.keys(a.body).sort()).toEqual(["confirmation_message", "id", "position", "referral_code", "referral_count", "referral_link", "status"]);
    expect(a.body).toMatchObject({ status: "pending", position: 1, referral_count: 0, confirmation_message: "Thanks!" });
    expect(a.body.referral_code).toMatch(/^[A-Za-z0-9]{8}$/);
    expect(a.body.referral_link).toBe(`https://acme.example/?ref=${a.body.referral_code}`);
    expect(a.headers.get("access-control-allow-origin")).toBe("*");
    const again = await join(app, w, { email: "ada@example.com", name: "Someone else" });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(a.body.id);
    const count = await app.call("GET", `${w.base}/entries/count`, { token: w.token });
    expect(count.body).toEqual({ total: 1, pending: 1, approved: 0, rejected: 0 });
    const entry = await app.call("GET", `${w.base}/entries/${a.body.id}`, { token: w.token });
    expect(entry.body).toMatchObject({ email: "ada@example.com", name: "Ada", utm: { source: "hn", medium: null, campaign: null }, position: 1 });
  });

  test("email syntax and length, disposable domains (configurable), honeypot, required custom fields", async () => {
    const w = await createWaitlist(app, { settings: { custom_fields: [{ name: "company", type: "text", required: true }, { name: "size", type: "select", options: ["1-10", "11+"] }] } });
    const ok = { company: "Acme" };
    const fields = async (body: Record<string, unknown>) => {
      const r = await join(app, w, body);
      expect(r.status).toBe(400);
      return r.body.error.details.map((d: any) => d.field);
    };
    expect(await fields({ email: "not-an-email", custom_fields: ok })).toEqual(["email"]);
    expect(await fields({ email: `${"a".repeat(243)}@example.com`, custom_fields: ok })).toEqual(["email"]);
    expect(await fields({ email: "x@mailinator.com", custom_fields: ok })).toEqual(["email"]);
    expect(await fields({ email: "x@sub.mailinator.com", custom_fields: ok })).toEqual(["email"]);
    expect(await fields({ email: "bot@example.com", website: "http://spam", custom_fields: ok })).toEqual(["website"]);
    expect(await fields({ email: "a@example.com" })).toEqual(["custom_fields.company"]);
    expect(await fields({ email: "a@example.com", custom_fields: { company: "Acme", size: "huge", other: 1 } })).toEqual(["custom_fields.other", "custom_fields.size"]);
    // 254 characters is the limit.
    expect((await join(app, w, { email: `${"a".repeat(242)}@example.com`, custom_fields: ok })).status).toBe(201);
    expect((await join(app, w, { email: "b@example.com", custom_fields: { company: "Acme", size: "11+" } })).status).toBe(201);
    await app.call("PATCH", w.base, { token: w.token, body: { settings: { block_disposable: false } } });
    expect((await join(app, w, { email: "x@mailinator.com", custom_fields: ok })).status).toBe(201);
  });

  test("max_entries: 409 WAITLIST_FULL at the boundary; a known email still answers 200", async () => {
    const w = await createWaitlist(app, { settings: { max_entries: 2 } });
    expect((await join(app, w, { email: "1@example.com" })).status).toBe(201);
    expect((await join(app, w, { email: "2@example.com" })).status).toBe(201);
    const full = await join(app, w, { email: "3@example.com" });
    expect(full.status).toBe(409);
    expect(full.body.error.code).toBe("WAITLIST_FULL");
    expect((await join(app, w, { email: "2@example.com" })).status).toBe(200);
  });

  test("paused and closed: 409 WAITLIST_CLOSED; draft 404", async () => {
    const w = await createWaitlist(app, { open: false });
    expect((await join(app, w, { email: "d@example.com" })).status).toBe(404);
    await app.call("PATCH", `${w.base}/status`, { token: w.token, body: { status: "open" } });
    await app.call("PATCH", `${w.base}/status`, { token: w.token, body: { status: "paused" } });
    const paused = await join(app, w, { email: "p@example.com" });
    expect(paused.status).toBe(409);
    expect(paused.body.error.code).toBe("WAITLIST_CLOSED");
    await app.call("PATCH", `${w.base}/status`, { token: w.token, body: { status: "closed" } });
    expect((await join(app, w, { email: "c@example.com" })).body.error.code).toBe("WAITLIST_CLOSED");
  });

  test("origins outside allowed_origins: 403 ORIGIN_NOT_ALLOWED; listed origin echoed", async () => {
    const w = await createWaitlist(app, { settings: { allowed_origins: ["https://acme.example"] } });
    const bad = await join(app, w, { email: "o@example.com" }, { origin: "https://evil.example" });
    expect(bad.status).toBe(403);
    expect(bad.body.error.code).toBe("ORIGIN_NOT_ALLOWED");
    const good = await join(app, w, { email: "o@example.com" }, { origin: "https://acme.example" });
    expect(good.status).toBe(201);
    expect(good.headers.get("access-control-allow-origin")).toBe("https://acme.example");
  });

  inProcess("moves the injected clock to slide the rate-limit window")("rate limits: 20 per client address per minute (21st 429 with Retry-After), per-waitlist limit from settings", async () => {
    const w = await createWaitlist(app);
    for (let i = 1; i <= 20; i++) expect((await join(app, w, { email: `r${i}@example.com` })).status).toBe(201);
    const r = await join(app, w, { email: "r21@example.com" });
    expect(r.status).toBe(429);
    expect(r.body.error.code).toBe("RATE_LIMITED");
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    // Sliding-window counter: the previous minute fades out linearly (61 s later 1/60 of it is gone: room for one).
    app.clock.advance(61_000);
    expect((await join(app, w, { email: "r21@example.com" })).status).toBe(201);
    expect((await join(app, w, { email: "r22@example.com" })).status).toBe(429);

    const w2 = await createWaitlist(app, { settings: { signups_per_minute: 3 } });
    for (let i = 1; i <= 3; i++) expect((await join(app, w2, { email: `q${i}@example.com` })).status).toBe(201);
    expect((await join(app, w2, { email: "q4@example.com" })).status).toBe(429);
  });

  inProcess("relies on app.handle having no client address (the binary sees 127.0.0.1)")("a burst from one client address is flagged in metadata.risk, not refused", async () => {
    const w = await createWaitlist(app);
    const ids: string[] = [];
    for (let i = 1; i <= 3; i++) ids.push((await join(app, w, { email: `b${i}@example.com` })).body.id);
    const first = await app.call("GET", `${w.base}/entries/${ids[0]}`, { token: w.token });
    const third = await app.call("GET", `${w.base}/entries/${ids[2]}`, { token: w.token });
    expect(first.body.metadata.risk).toBeUndefined();
    // Requests through app.handle have no client address: nothing to compare, nothing flagged.
    expect(third.body.metadata.risk).toBeUndefined();
  });
});
