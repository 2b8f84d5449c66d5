import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { HOUR } from "../../src/core/clock";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { claimsOf, createAuthApp, signupEndUser, type TestAuthApp } from "../helpers/auth";
import { ON_BINARY } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

const auditPath = (a: TestAuthApp, query: Record<string, string> = {}) => {
  const qs = new URLSearchParams(query).toString();
  return a.path("/audit-log") + (qs ? `?${qs}` : "");
};
const audit = (a: TestAuthApp, query: Record<string, string> = {}, token = a.key) => app.call("GET", auditPath(a, query), { token });

/** The whole log of an App (one page of 200, which every test log fits in). */
async function wholeLog(a: TestAuthApp, query: Record<string, string> = {}) {
  const r = await audit(a, { ...query, limit: "200" });
  expect(r.status).toBe(200);
  expect(r.body.pagination.has_more).toBe(false);
  return r.body.data as any[];
}

const patchApp = (a: TestAuthApp, display_name: string) => app.call("PATCH", `/auth/v1/apps/${a.id}`, { token: a.key, body: { display_name } });

async function mintKey(a: TestAuthApp, actions: string[]) {
  const r = await app.call("POST", `/platform/v1/workspaces/${a.workspace.slug}/api-keys`, {
    token: a.session,
    body: { name: `restricted-${actions.join("-")}`, policy: [{ effect: "allow", actions, resources: ["*"] }] },
  });
  expect(r.status).toBe(201);
  return r.body.key as string;
}

const isNewestFirst = (entries: { id: string }[]) => entries.every((e, i) => i === 0 || entries[i - 1].id > e.id);

describe("what is recorded", () => {
  test("sign-up, sign-in success and failure, and app.update appear with actor, target, outcome and request details", async () => {
    const a = await createAuthApp(app);
    const u = await signupEndUser(app, a);
    const userId = claimsOf(u.access).sub as string;
    const ua = { "user-agent": "audit-test/1.0" };
    const ok = await app.call("POST", a.path("/auth/signin"), { body: { identifier: u.username, password: u.password }, headers: ua });
    expect(ok.status).toBe(200);
    const wrongPassword = "definitely-Wrong-pw-42";
    const bad = await app.call("POST", a.path("/auth/signin"), { body: { identifier: u.username, password: wrongPassword }, headers: ua });
    expect(bad.status).toBe(401);
    expect((await patchApp(a, "Renamed")).status).toBe(200);

    const log = await wholeLog(a);
    expect(isNewestFirst(log)).toBe(true);
    // Newest first: the update, the failure, the success, the sign-up (then app.create).
    expect(log.slice(0, 4).map((e) => [e.action, e.outcome])).toEqual([
      ["app.update", "success"],
      ["user.signin", "failure"],
      ["user.signin", "success"],
      ["user.create", "success"],
    ]);
    const [update, failure, success, signup] = log;

    expect(signup).toMatchObject({ actor: { type: "user", id: userId }, target: { type: "user", id: userId }, metadata: { method: "password" } });
    expect(success).toMatchObject({ actor: { type: "user", id: userId }, user_agent: "audit-test/1.0", metadata: { method: "password", amr: ["pwd"] } });
    expect(failure).toMatchObject({ outcome: "failure", actor: { type: "user", id: userId }, target: null, user_agent: "audit-test/1.0" });
    // The attempted password is nowhere in the entry (nor the real one).
    expect(JSON.stringify(failure)).not.toContain(wrongPassword);
    expect(JSON.stringify(log)).not.toContain(u.password);
    expect(update).toMatchObject({ actor: { type: "api_key" }, target: { type: "app", id: a.id } });
    expect(update.metadata.fields).toContain("display_name");

    for (const e of log) {
      expect(Object.keys(e).sort()).toEqual(["action", "actor", "created_at", "id", "ip", "metadata", "outcome", "target", "user_agent"]);
      expect(new Date(e.created_at).toISOString()).toBe(e.created_at);
    }
  });

  test("a failed sign-in with an unknown identifier is recorded as anonymous", async () => {
    const a = await createAuthApp(app);
    const r = await app.call("POST", a.path("/auth/signin"), { body: { identifier: "nobody-here", password: "whatever-123" } });
    expect(r.status).toBe(401);
    const log = await wholeLog(a, { outcome: "failure" });
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ action: "user.signin", outcome: "failure", actor: { type: "anonymous", id: null } });
    expect(JSON.stringify(log[0])).not.toContain("whatever-123");
  });
});

describe("filters", () => {
  let a: TestAuthApp;
  let u1: string;
  let u2: string;
  let t0: number;
  /** An instant between the two halves of the fixture. */
  let mid: number;
  beforeAll(async () => {
    t0 = app.clock.nowMs();
    a = await createAuthApp(app);
    const first = await signupEndUser(app, a);
    u1 = claimsOf(first.access).sub;
    expect((await app.call("POST", a.path("/auth/signin"), { body: { identifier: first.username, password: "wrong-password-1" } })).status).toBe(401);
    // An hour apart in-process; on the binary's real clock, a few milliseconds either side of mid.
    if (ON_BINARY) {
      await Bun.sleep(5);
      mid = Date.now();
      await Bun.sleep(5);
    } else {
      app.clock.advance(HOUR);
      mid = t0 + HOUR / 2;
    }
    const second = await signupEndUser(app, a);
    u2 = claimsOf(second.access).sub;
    expect((await app.call("POST", a.path("/auth/signin"), { body: { identifier: second.username, password: second.password } })).status).toBe(200);
    expect((await patchApp(a, "Filtered")).status).toBe(200);
  });

  test("every entry of the fixture, for reference", async () => {
    const log = await wholeLog(a);
    expect(log.map((e) => e.action)).toEqual(["app.update", "user.signin", "user.create", "user.signin", "user.create", "app.create"]);
  });

  test("action: exact name", async () => {
    const log = await wholeLog(a, { action: "user.signin" });
    expect(log.map((e) => e.outcome)).toEqual(["success", "failure"]);
    expect((await wholeLog(a, { action: "user.create" })).map((e) => e.target.id)).toEqual([u2, u1]);
    // Exact means exact: a prefix of a name is not a match.
    expect(await wholeLog(a, { action: "user.sign" })).toEqual([]);
  });

  test("action: prefix pattern, and * for everything", async () => {
    expect((await wholeLog(a, { action: "user.*" })).map((e) => e.action)).toEqual(["user.signin", "user.create", "user.signin", "user.create"]);
    expect((await wholeLog(a, { action: "app.*" })).map((e) => e.action)).toEqual(["app.update", "app.create"]);
    expect((await wholeLog(a, { action: "user.signin.*" })).length).toBe(0);
    expect((await wholeLog(a, { action: "*" })).length).toBe(6);
  });

  test("actor_id and target_id", async () => {
    const byU1 = await wholeLog(a, { actor_id: u1 });
    expect(byU1.map((e) => [e.action, e.outcome])).toEqual([["user.signin", "failure"], ["user.create", "success"]]);
    const byU2 = await wholeLog(a, { actor_id: u2 });
    expect(byU2.map((e) => [e.action, e.outcome])).toEqual([["user.signin", "success"], ["user.create", "success"]]);
    const onU2 = await wholeLog(a, { target_id: u2 });
    expect(onU2.map((e) => e.action)).toEqual(["user.create"]);
    const onApp = await wholeLog(a, { target_id: a.id });
    expect(onApp.map((e) => e.action)).toEqual(["app.update", "app.create"]);
    expect(await wholeLog(a, { actor_id: "someone-else" })).toEqual([]);
  });

  test("outcome", async () => {
    const failures = await wholeLog(a, { outcome: "failure" });
    expect(failures.map((e) => [e.action, e.actor.id])).toEqual([["user.signin", u1]]);
    expect((await wholeLog(a, { outcome: "success" })).length).toBe(5);
  });

  test("since (inclusive) and until (exclusive), with any offset", async () => {
    const later = await wholeLog(a, { since: new Date(mid).toISOString() });
    expect(later.map((e) => e.action)).toEqual(["app.update", "user.signin", "user.create"]);
    const earlier = await wholeLog(a, { until: new Date(mid).toISOString() });
    expect(earlier.map((e) => e.action)).toEqual(["user.signin", "user.create", "app.create"]);
    // The same instant written with an offset selects the same entries.
    const midPlus2 = new Date(mid + 2 * HOUR).toISOString().replace("Z", "+02:00");
    expect((await wholeLog(a, { since: midPlus2 })).map((e) => e.id)).toEqual(later.map((e) => e.id));
    // Edges: since at the entry's own time includes it; until at that time excludes it.
    const newest = later[0].created_at;
    expect((await wholeLog(a, { since: newest })).map((e) => e.id)).toContain(later[0].id);
    expect((await wholeLog(a, { until: newest })).map((e) => e.id)).not.toContain(later[0].id);
    expect((await wholeLog(a, { since: new Date(t0).toISOString(), until: new Date(mid).toISOString() })).map((e) => e.action)).toEqual(["user.signin", "user.create", "app.create"]);
  });

  test("filters combine", async () => {
    const r = await wholeLog(a, { action: "user.*", actor_id: u2, since: new Date(mid).toISOString() });
    expect(r.map((e) => e.action)).toEqual(["user.signin", "user.create"]);
    expect(await wholeLog(a, { action: "user.signin", outcome: "failure", actor_id: u2 })).toEqual([]);
  });

  test("malformed filters are 400 with the field named", async () => {
    const cases: [Record<string, string>, string][] = [
      [{ outcome: "maybe" }, "outcome"],
      [{ since: "yesterday" }, "since"],
      [{ until: "2026-02-31T00:00:00Z" }, "until"],
      [{ since: "2026-11-21T12:00:00" }, "since"], // no zone: ambiguous
      [{ since: "2026-11-21T13:00:00Z", until: "2026-11-21T12:00:00Z" }, "until"],
      [{ action: "user*" }, "action"],
      [{ action: "user.*.x" }, "action"],
      [{ actor_id: "" }, "actor_id"],
      [{ target_id: "x".repeat(201) }, "target_id"],
      [{ limit: "0" }, "limit"],
      [{ limit: "201" }, "limit"],
      [{ limit: "ten" }, "limit"],
    ];
    for (const [query, field] of cases) {
      const r = await audit(a, query);
      expect([JSON.stringify(query), r.status]).toEqual([JSON.stringify(query), 400]);
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
      expect(r.body.error.details.map((d: any) => d.field)).toContain(field);
    }
  });
});

describe("pages", () => {
  test("three pages of a filtered log: newest first, no duplicates, no gaps; the default limit is 50", async () => {
    const a = await createAuthApp(app);
    for (let i = 0; i < 10; i++) expect((await patchApp(a, `Name ${i}`)).status).toBe(200);
    const all = await wholeLog(a, { action: "app.*" });
    expect(all).toHaveLength(11); // 10 updates + app.create

    const seen: string[] = [];
    let cursor: string | null = null;
    const sizes: number[] = [];
    for (let page = 0; page < 3; page++) {
      const r = await audit(a, { action: "app.*", limit: "4", ...(cursor ? { cursor } : {}) });
      expect(r.status).toBe(200);
      sizes.push(r.body.data.length);
      seen.push(...r.body.data.map((e: any) => e.id));
      cursor = r.body.pagination.next_cursor;
      expect(r.body.pagination.has_more).toBe(page < 2);
      expect(cursor === null).toBe(page === 2);
    }
    expect(sizes).toEqual([4, 4, 3]);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(all.map((e) => e.id));

    // Entries written while paging do not shift later pages (keyset on the id).
    const first = await audit(a, { limit: "4" });
    expect((await patchApp(a, "During paging")).status).toBe(200);
    const second = await audit(a, { limit: "4", cursor: first.body.pagination.next_cursor });
    expect(second.body.data[0].id < first.body.data[3].id).toBe(true);

    const dflt = await audit(a);
    expect(dflt.body.data.length).toBe(12);
    expect(dflt.body.pagination).toEqual({ next_cursor: null, has_more: false });
  });

  test("limit 200 is accepted; the default page is 50 with a cursor for the rest", async () => {
    const a = await createAuthApp(app);
    for (let i = 0; i < 52; i++) expect((await patchApp(a, `N${i}`)).status).toBe(200);
    const first = await audit(a);
    expect(first.body.data).toHaveLength(50);
    expect(first.body.pagination.has_more).toBe(true);
    const rest = await audit(a, { cursor: first.body.pagination.next_cursor });
    expect(rest.body.data).toHaveLength(3);
    expect(rest.body.pagination).toEqual({ next_cursor: null, has_more: false });
    expect((await audit(a, { limit: "200" })).body.data).toHaveLength(53);
  });

  test("a malformed cursor is 400 INVALID_CURSOR", async () => {
    const a = await createAuthApp(app);
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
    for (const cursor of ["!!!", "not-base64-json", b64({ x: 1 }), b64({ id: "nope" }), b64({ id: 5 }), b64("string")]) {
      const r = await audit(a, { cursor });
      expect([cursor, r.status, r.body.error?.code]).toEqual([cursor, 400, "INVALID_CURSOR"]);
    }
  });
});

describe("who may read it", () => {
  test("the workspace key and the owner's console session may; no credential is 401; another workspace's key is 404", async () => {
    const a = await createAuthApp(app);
    expect((await audit(a)).status).toBe(200);
    expect((await audit(a, {}, a.session)).status).toBe(200);
    // The console page's cookie works like the bearer session (a read: no CSRF concern).
    expect((await app.call("GET", auditPath(a), { headers: { cookie: `auth_token=${a.session}` } })).status).toBe(200);
    const anon = await app.call("GET", auditPath(a));
    expect(anon.status).toBe(401);
    const stranger = await ownerWithKey(app);
    const other = await audit(a, {}, stranger.token);
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe("NOT_FOUND");
    expect((await audit(a, {}, stranger.session)).status).toBe(404);
    // An unknown App is the same 404.
    expect((await app.call("GET", "/auth/no-such-app/v1/audit-log", { token: a.key })).status).toBe(404);
  });

  test("a key without auth.audit.list is 403; one with exactly that action may read", async () => {
    const a = await createAuthApp(app);
    const readOnly = await mintKey(a, ["auth.app.read"]);
    const denied = await audit(a, {}, readOnly);
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe("FORBIDDEN");
    const auditor = await mintKey(a, ["auth.audit.list"]);
    const allowed = await audit(a, {}, auditor);
    expect(allowed.status).toBe(200);
    expect(allowed.body.data.map((e: any) => e.action)).toContain("app.create");
  });

  test("an M2M token of the App may read with auth.audit.list, is 403 without it; another App's M2M token is 401", async () => {
    const a = await createAuthApp(app);
    const m2mToken = async (target: TestAuthApp, permissions: string[]) => {
      const c = await app.call("POST", `/auth/v1/apps/${target.id}/m2m-clients`, { token: target.key, body: { name: permissions.join(","), permissions } });
      expect(c.status).toBe(201);
      const t = await app.call("POST", target.path("/oauth/token"), { body: { grant_type: "client_credentials", client_id: c.body.client_id, client_secret: c.body.client_secret } });
      expect(t.status).toBe(200);
      return t.body.access_token as string;
    };
    const auditor = await m2mToken(a, ["auth.audit.list"]);
    const ok = await audit(a, {}, auditor);
    expect(ok.status).toBe(200);
    expect(ok.body.data.map((e: any) => e.action)).toContain("app.create");
    expect((await audit(a, {}, await m2mToken(a, ["auth.user.read"]))).status).toBe(403);
    const otherApp = await createAuthApp(app);
    expect((await audit(a, {}, await m2mToken(otherApp, ["auth.audit.list"]))).status).toBe(401);
  });

  test("App B's entries never show at App A, even in the same workspace", async () => {
    const a = await createAuthApp(app);
    const created = await app.call("POST", "/auth/v1/apps", { token: a.key, body: { slug: `${a.slug}-b`, display_name: "B" } });
    expect(created.status).toBe(201);
    const b: TestAuthApp = { ...a, id: created.body.id, slug: created.body.slug, publishable_key: created.body.publishable_key, path: (p) => `/auth/${created.body.slug}/v1${p}` };
    const userA = await signupEndUser(app, a);
    const userB = await signupEndUser(app, b);
    const idB = claimsOf(userB.access).sub;
    await app.call("POST", b.path("/auth/signin"), { body: { identifier: userB.username, password: "wrong-password-b" } });

    const logA = await wholeLog(a);
    const logB = await wholeLog(b);
    expect(logB.length).toBeGreaterThanOrEqual(3);
    const idsA = new Set(logA.map((e) => e.id));
    expect(logB.some((e) => idsA.has(e.id))).toBe(false);
    expect(logA.some((e) => e.actor.id === idB || e.target?.id === idB || e.target?.id === b.id)).toBe(false);
    expect(await wholeLog(a, { actor_id: idB })).toEqual([]);
    expect(await wholeLog(a, { outcome: "failure" })).toEqual([]);
    expect((await wholeLog(a, { actor_id: claimsOf(userA.access).sub })).map((e) => e.action)).toEqual(["user.create"]);
    // A cursor taken from B's log does not reveal B's entries at A either.
    const pageB = await audit(b, { limit: "1" });
    const viaCursor = await audit(a, { cursor: pageB.body.pagination.next_cursor });
    expect(viaCursor.status).toBe(200);
    expect(viaCursor.body.data.some((e: any) => !idsA.has(e.id))).toBe(false);
  });
});
