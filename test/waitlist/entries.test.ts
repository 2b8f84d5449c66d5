import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { startTestApp, type TestApp } from "../helpers/app";
import { ON_BINARY } from "../helpers/target";
import { createWaitlist, join, type TestWaitlist } from "../helpers/waitlist";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ WAITLIST_SIGNUPS_PER_IP_PER_MINUTE: "1000" });
});
afterAll(() => app.stop());

/** Spaces sign-ups apart in time: the in-process clock is frozen, the binary's real clock moves on its own. */
const tick = () => {
  if (!ON_BINARY) app.clock.advance(1000);
};

async function fill(w: TestWaitlist, n: number, prefix = "e") {
  const out: { id: string; referral_code: string }[] = [];
  for (let i = 1; i <= n; i++) {
    tick();
    const r = await join(app, w, { email: `${prefix}${i}@example.com`, name: `Name ${i}` });
    expect(r.status).toBe(201);
    out.push(r.body);
  }
  return out;
}
const positions = async (w: TestWaitlist) => {
  const r = await app.call("GET", `${w.base}/entries?status=pending`, { token: w.token });
  return r.body.data.map((e: any) => [e.email, e.position]);
};

describe("positions and referrals", () => {
  test("referral boost arithmetic: effective = max(1, ordinal - boost*referrals), a boosted entry goes ahead on a tie; self and foreign codes ignored", async () => {
    const w = await createWaitlist(app, { settings: { referral_boost: 2 } });
    const e = await fill(w, 5);
    // e5 refers two people: ordinal 5 - 2*2 = 1 -> ties with e1 (effective 1) and goes ahead of it.
    tick();
    const r1 = await join(app, w, { email: "f1@example.com", referral_code: e[4]!.referral_code });
    expect(r1.body.position).toBe(6);
    tick();
    await join(app, w, { email: "f2@example.com", referral_code: e[4]!.referral_code });
    expect(await positions(w)).toEqual([
      ["e5@example.com", 1], ["e1@example.com", 2], ["e2@example.com", 3], ["e3@example.com", 4], ["e4@example.com", 5], ["f1@example.com", 6], ["f2@example.com", 7],
    ]);
    const e5 = await app.call("GET", `${w.base}/entries/${e[4]!.id}`, { token: w.token });
    expect(e5.body).toMatchObject({ referral_count: 2, position: 1 });
    // A repeat sign-up of the referrer shows the same numbers publicly.
    const pub = await join(app, w, { email: "e5@example.com" });
    expect(pub.body).toMatchObject({ position: 1, referral_count: 2 });

    // Rejecting a referred entry stops its referral counting (5 - 2 = 3: ahead of e3); deleting the other too.
    const f1 = (await app.call("GET", `${w.base}/entries?q=f1@`, { token: w.token })).body.data[0];
    expect((await app.call("POST", `${w.base}/entries/${f1.id}/reject`, { token: w.token })).status).toBe(200);
    expect((await app.call("GET", `${w.base}/entries/${e[4]!.id}`, { token: w.token })).body).toMatchObject({ referral_count: 1, position: 3 });
    const f2 = (await app.call("GET", `${w.base}/entries?q=F2`, { token: w.token })).body.data[0];
    expect((await app.call("DELETE", `${w.base}/entries/${f2.id}`, { token: w.token })).status).toBe(204);
    expect((await app.call("GET", `${w.base}/entries/${e[4]!.id}`, { token: w.token })).body).toMatchObject({ referral_count: 0, position: 5 });

    // Self-referral (a known email with its own code: nothing changes) and another waitlist's code: ignored.
    const other = await createWaitlist(app);
    const foreign = (await join(app, other, { email: "x@example.com" })).body.referral_code;
    const g = await join(app, w, { email: "g@example.com", referral_code: foreign });
    expect(g.status).toBe(201);
    expect((await app.call("GET", `${w.base}/entries/${g.body.id}`, { token: w.token })).body.referred_by_entry_id).toBeNull();
    expect((await join(app, w, { email: "e1@example.com", referral_code: e[0]!.referral_code })).body.referral_count).toBe(0);
  });

  /**
   * Every place that shows a position, for each pending entry: the admin list order (sort=position),
   * the entry read, the public lookup (a repeat sign-up answers the entry's public view), the
   * CSV export and bulk top. Returns the emails in list order after checking they all agree.
   */
  async function agreedOrder(w: TestWaitlist): Promise<string[]> {
    const list = (await app.call("GET", `${w.base}/entries?status=pending&limit=200`, { token: w.token })).body.data as any[];
    expect(list.map((x) => x.position)).toEqual(list.map((_, i) => i + 1));
    const csv = parse((await app.call("GET", `${w.base}/entries/export.csv`, { token: w.token })).body as string, { columns: true }) as Record<string, string>[];
    const csvPosition = new Map(csv.map((r) => [r.email, Number(r.position)]));
    for (const x of list) {
      expect((await app.call("GET", `${w.base}/entries/${x.id}`, { token: w.token })).body.position).toBe(x.position);
      expect((await join(app, w, { email: x.email })).body.position).toBe(x.position);
      expect(csvPosition.get(x.email)).toBe(x.position);
    }
    return list.map((x) => x.email.split("@")[0]);
  }

  test("boost 1: one referral passes exactly one entry; the entry, the public lookup, the list, the export agree", async () => {
    const w = await createWaitlist(app, { settings: { referral_boost: 1 } });
    const e = await fill(w, 4, "b");
    expect(await agreedOrder(w)).toEqual(["b1", "b2", "b3", "b4"]);
    tick();
    await join(app, w, { email: "r1@example.com", referral_code: e[2]!.referral_code });
    // b3: ordinal 3 - 1 = 2, the place of b2: it passes b2 and nobody else.
    expect(await agreedOrder(w)).toEqual(["b1", "b3", "b2", "b4", "r1"]);
    tick();
    await join(app, w, { email: "r2@example.com", referral_code: e[2]!.referral_code });
    // A second referral passes one more (b1).
    expect(await agreedOrder(w)).toEqual(["b3", "b1", "b2", "b4", "r1", "r2"]);
    // Bulk top picks by the same order.
    const top = await app.call("POST", `${w.base}/entries/bulk`, { token: w.token, body: { action: "approve", top: 1 } });
    expect(top.body.data.map((x: any) => x.email)).toEqual(["b3@example.com"]);
  });

  test("boost N passes N entries per referral, and nobody goes above position 1", async () => {
    const w = await createWaitlist(app, { settings: { referral_boost: 3 } });
    const e = await fill(w, 6, "n");
    tick();
    await join(app, w, { email: "s1@example.com", referral_code: e[5]!.referral_code });
    // n6: 6 - 3 = 3: passes n3, n4, n5.
    expect(await agreedOrder(w)).toEqual(["n1", "n2", "n6", "n3", "n4", "n5", "s1"]);
    tick();
    await join(app, w, { email: "s2@example.com", referral_code: e[5]!.referral_code });
    // 6 - 6 = 0, kept at 1: first, and n1 second.
    expect(await agreedOrder(w)).toEqual(["n6", "n1", "n2", "n3", "n4", "n5", "s1", "s2"]);
    tick();
    await join(app, w, { email: "s3@example.com", referral_code: e[4]!.referral_code });
    // n5: 5 - 3 = 2; n6 (effective 1) stays ahead; two boosted entries keep their own order.
    expect(await agreedOrder(w)).toEqual(["n6", "n1", "n5", "n2", "n3", "n4", "s1", "s2", "s3"]);

    const big = await createWaitlist(app, { settings: { referral_boost: 1000 } });
    const g = await fill(big, 3, "g");
    tick();
    await join(app, big, { email: "t1@example.com", referral_code: g[1]!.referral_code });
    expect(await agreedOrder(big)).toEqual(["g2", "g1", "g3", "t1"]);

    // Boost 0: referrals count but move nobody.
    const none = await createWaitlist(app, { settings: { referral_boost: 0 } });
    const z = await fill(none, 3, "z");
    tick();
    await join(app, none, { email: "u1@example.com", referral_code: z[2]!.referral_code });
    expect(await agreedOrder(none)).toEqual(["z1", "z2", "z3", "u1"]);
  });

  test("admin list: filters, sort, cursor pages; approve/reject from pending only; PATCH; bulk top and ids (atomic)", async () => {
    const w = await createWaitlist(app);
    const e = await fill(w, 6, "m");
    const page1 = await app.call("GET", `${w.base}/entries?limit=4&sort=created_at`, { token: w.token });
    expect(page1.body.data).toHaveLength(4);
    expect(page1.body.pagination.has_more).toBe(true);
    const page2 = await app.call("GET", `${w.base}/entries?limit=4&sort=created_at&cursor=${page1.body.pagination.next_cursor}`, { token: w.token });
    expect(page2.body.data.map((x: any) => x.email)).toEqual(["m5@example.com", "m6@example.com"]);
    expect((await app.call("GET", `${w.base}/entries?limit=4&sort=position&cursor=${page1.body.pagination.next_cursor}`, { token: w.token })).status).toBe(400);

    const a = await app.call("POST", `${w.base}/entries/${e[1]!.id}/approve`, { token: w.token });
    expect(a.body).toMatchObject({ status: "approved", position: null });
    const twice = await app.call("POST", `${w.base}/entries/${e[1]!.id}/reject`, { token: w.token });
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBe("ENTRY_NOT_PENDING");
    const p = await app.call("PATCH", `${w.base}/entries/${e[0]!.id}`, { token: w.token, body: { name: "Ada", metadata: { vip: true } } });
    expect(p.body).toMatchObject({ name: "Ada", metadata: { vip: true }, position: 1 });

    // Bulk with one decided entry: nothing changes.
    const atomic = await app.call("POST", `${w.base}/entries/bulk`, { token: w.token, body: { action: "reject", entry_ids: [e[2]!.id, e[1]!.id] } });
    expect(atomic.status).toBe(409);
    expect((await app.call("GET", `${w.base}/entries/${e[2]!.id}`, { token: w.token })).body.status).toBe("pending");
    const top = await app.call("POST", `${w.base}/entries/bulk`, { token: w.token, body: { action: "approve", top: 2 } });
    expect(top.status).toBe(200);
    expect(top.body.data.map((x: any) => x.email)).toEqual(["m1@example.com", "m3@example.com"]);
    const ids = await app.call("POST", `${w.base}/entries/bulk`, { token: w.token, body: { action: "reject", entry_ids: [e[3]!.id] } });
    expect(ids.body.count).toBe(1);
    expect((await app.call("POST", `${w.base}/entries/bulk`, { token: w.token, body: { action: "approve", entry_ids: Array.from({ length: 501 }, () => e[4]!.id) } })).status).toBe(400);
    expect((await app.call("GET", `${w.base}/entries/count`, { token: w.token })).body).toEqual({ total: 6, pending: 2, approved: 3, rejected: 1 });
    const approved = await app.call("GET", `${w.base}/entries?status=approved&sort=created_at`, { token: w.token });
    expect(approved.body.data.map((x: any) => x.email)).toEqual(["m1@example.com", "m2@example.com", "m3@example.com"]);
  });

  test("export.csv: RFC 4180, custom fields and utm columns, formula-like values neutralised, parsed back", async () => {
    const w = await createWaitlist(app, { settings: { custom_fields: [{ name: "company", type: "text" }] } });
    await join(app, w, { email: "csv1@example.com", name: '=HYPERLINK("http://evil")', custom_fields: { company: "Acme, Inc." }, utm: { source: "+1", campaign: "line\nbreak" } });
    await join(app, w, { email: "csv2@example.com", name: 'Quote "me"', interest: "@SUM(A1)" });
    const res = await app.handle(new Request(`http://localhost${w.base}/entries/export.csv`, { headers: { authorization: `Bearer ${w.token}` } }));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/csv");
    const text = await res.text();
    expect(text.endsWith("\r\n")).toBe(true);
    const rows = parse(text, { columns: true }) as Record<string, string>[];
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ email: "csv1@example.com", name: `'=HYPERLINK("http://evil")`, "custom.company": "Acme, Inc.", utm_source: "'+1", utm_campaign: "line\nbreak", status: "pending", position: "1" });
    expect(rows[1]).toMatchObject({ email: "csv2@example.com", name: 'Quote "me"', interest: "'@SUM(A1)", "custom.company": "" });
  });

  test("concurrent sign-ups share group commits: positions 1..N, max_entries holds, a racing duplicate answers 200 with the winner", async () => {
    const w = await createWaitlist(app, { settings: { max_entries: 30 } });
    const results = await Promise.all(Array.from({ length: 31 }, (_, i) => join(app, w, { email: `c${i}@example.com` })));
    const created = results.filter((r) => r.status === 201);
    expect(created).toHaveLength(30);
    expect(created.map((r) => r.body.position).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(results.filter((r) => r.status === 409).map((r) => r.body.error.code)).toEqual(["WAITLIST_FULL"]);
    expect((await app.call("GET", `${w.base}/entries/count`, { token: w.token })).body).toMatchObject({ total: 30, pending: 30 });

    const w2 = await createWaitlist(app);
    const race = await Promise.all([...Array.from({ length: 19 }, (_, i) => ({ email: `d${i}@example.com` })), { email: "d0@example.com" }].map((b) => join(app, w2, b)));
    expect(race.filter((r) => r.status === 201)).toHaveLength(19);
    // The two answers for d0: one 201, one 200, the same entry (whichever reached the writer first).
    expect([race[0]!.status, race[19]!.status].sort()).toEqual([200, 201]);
    expect(race[19]!.body.id).toBe(race[0]!.body.id);
  });
});
