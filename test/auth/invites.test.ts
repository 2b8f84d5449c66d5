/**
 * Invites: admin create / list / revoke, and the public accept-invite (account creation,
 * verified email, role and tenant membership, 409 / 410 rules, atomic use counting). The
 * invite mail is read from a real SMTP sink.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SECOND } from "../../src/core/clock";
import { ownerWithKey, startTestAppWithMail, type TestApp } from "../helpers/app";
import { claimsOf, createAuthApp, signupEndUser, type TestAuthApp } from "../helpers/auth";
import type { SmtpSink } from "../helpers/smtp-sink";
import { inProcess } from "../helpers/target";

let app: TestApp;
let sink: SmtpSink;
let stop: () => Promise<void>;
let a: TestAuthApp;
beforeAll(async () => {
  ({ app, sink, stop } = await startTestAppWithMail());
  a = await createAuthApp(app, { allowed_redirect_origins: ["https://app.example.com"] });
});
afterAll(() => stop());

let n = 0;
const uniq = (p = "inv") => `${p}${++n}-${Date.now().toString(36)}`;
const PASSWORD = "correct horse battery";

async function invite(body: Record<string, unknown> = {}, target = a) {
  const r = await app.call("POST", target.path("/invites"), { token: target.key, body });
  expect(r.status).toBe(201);
  return r.body as { id: string; code: string; email: string | null; uses: number; max_uses: number; status: string };
}
const accept = (body: Record<string, unknown>, target = a) => app.call("POST", target.path("/auth/accept-invite"), { body: { password: PASSWORD, ...body } });
const signin = (identifier: string, password = PASSWORD, extra: Record<string, unknown> = {}) =>
  app.call("POST", a.path("/auth/signin"), { body: { identifier, password, ...extra } });
const listInvites = (query = "") => app.call("GET", a.path(`/invites${query}`), { token: a.key });

describe("create and accept", () => {
  inProcess("compares expires_at with the frozen injected clock, runs the mail job by hand and reads the stored hash and audit (app.ctx)")("an emailed invite creates a verified account that signs in with the invite email", async () => {
    const email = `${uniq("ada")}@example.com`;
    const created = await app.call("POST", a.path("/invites"), { token: a.key, body: { email, send_email: true, accept_url: "https://app.example.com/join?x=1" } });
    expect(created.status).toBe(201);
    expect(created.body.code).toMatch(/^inv_[A-Za-z0-9]{32}$/);
    expect(created.body).toMatchObject({ email, role: null, tenant_id: null, max_uses: 1, uses: 0, status: "active", revoked_at: null });
    expect(created.body.code_hint).toBe(`inv_...${created.body.code.slice(-4)}`);
    expect(created.body.expires_at).toBe(new Date(app.clock.nowMs() + 7 * 24 * 3600 * SECOND).toISOString());
    // Stored hashed: the code is nowhere in the database.
    const raw = (await app.ctx.db.get<{ code_hash: string }>("SELECT code_hash FROM auth_invites WHERE id = ?", created.body.id))!;
    expect(raw.code_hash).not.toContain(created.body.code);

    await app.ctx.mailer.deliverPending();
    const mail = await sink.waitFor((m) => m.to.includes(email));
    expect(mail.subject).toContain("invited");
    expect(mail.text).toContain(created.body.code);
    expect(mail.text).toContain(`https://app.example.com/join?x=1&invite_code=${created.body.code}`);

    const r = await accept({ code: created.body.code, display_name: "Ada" });
    expect(r.status).toBe(200);
    expect(r.body.token_type).toBe("Bearer");
    const claims = claimsOf(r.body.access_token);
    expect(claims.iss).toBe(a.issuer);
    expect(claims.amr).toEqual(["pwd"]);

    // The username derives from the local part; the email is verified, so it signs in.
    const me = await app.call("GET", a.path("/me"), { token: r.body.access_token });
    expect(me.body).toMatchObject({ id: claims.sub, email, email_verified: true, display_name: "Ada", username: email.split("@")[0] });
    expect((await signin(email)).status).toBe(200);

    const listed = (await listInvites()).body.data.find((i: any) => i.id === created.body.id);
    expect(listed).toMatchObject({ uses: 1, status: "exhausted" });
    expect(listed.code).toBeUndefined();
    const audit = (await app.ctx.db.all<{ action: string }>("SELECT action FROM auth_audit WHERE app_id = ? AND target_id = ?", a.id, created.body.id)).map((x) => x.action);
    expect(audit.sort()).toEqual(["invite.accept", "invite.create"]);
  });

  test("an invite without email needs one from the accepter, and that address stays unverified", async () => {
    const inv = await invite();
    const missing = await accept({ code: inv.code });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details[0].field).toBe("email");
    const email = `${uniq("bob")}@example.com`;
    const username = uniq("bob");
    const r = await accept({ code: inv.code, email, username });
    expect(r.status).toBe(200);
    expect((await app.call("GET", a.path("/me"), { token: r.body.access_token })).body).toMatchObject({ email, email_verified: false, username });
    expect((await signin(email)).status).toBe(401);
    expect((await signin(username)).status).toBe(200);
  });

  test("an invite bound to an email refuses another address", async () => {
    const inv = await invite({ email: `${uniq()}@example.com` });
    const r = await accept({ code: inv.code, email: `${uniq()}@example.com` });
    expect(r.status).toBe(400);
    expect(r.body.error.details[0].field).toBe("email");
  });

  test("the invite's role becomes the user's App role; without one the App default applies", async () => {
    const role = await app.call("POST", a.path("/roles"), { token: a.key, body: { name: uniq("editor") } });
    expect(role.status).toBe(201);
    const inv = await invite({ email: `${uniq()}@example.com`, role: role.body.name });
    expect(inv).toMatchObject({ role: role.body.name });
    const r = await accept({ code: inv.code });
    expect(claimsOf(r.body.access_token).role).toBe(role.body.name);
    const plain = await accept({ code: (await invite({ email: `${uniq()}@example.com` })).code });
    expect(claimsOf(plain.body.access_token).role).toBeNull();
  });

  inProcess("reads the tenant.member.added event from the outbox in the store (app.ctx.db)")("a tenant invite adds the membership (with the invite's role) and the user can sign in to the tenant", async () => {
    const role = await app.call("POST", a.path("/roles"), { token: a.key, body: { name: uniq("member") } });
    const tenant = await app.call("POST", a.path("/tenants"), { token: a.key, body: { display_name: `Acme ${uniq()}` } });
    expect(tenant.status).toBe(201);
    const email = `${uniq()}@example.com`;
    const inv = await invite({ email, role: role.body.name, tenant_id: tenant.body.display_id });
    expect(inv).toMatchObject({ tenant_id: tenant.body.id });
    const r = await accept({ code: inv.code });
    expect(r.status).toBe(200);
    const userId = claimsOf(r.body.access_token).sub;

    const members = await app.call("GET", a.path(`/tenants/${tenant.body.id}/members`), { token: a.key });
    expect(members.body.data.map((m: any) => m.account_id ?? m.user_id)).toContain(userId);
    const me = await app.call("GET", a.path("/me"), { token: r.body.access_token });
    expect(me.body.tenants).toEqual([expect.objectContaining({ id: tenant.body.id, display_id: tenant.body.display_id, role: role.body.name })]);
    const s = await signin(email, PASSWORD, { tenant_id: tenant.body.id });
    expect(s.status).toBe(200);
    expect(claimsOf(s.body.access_token)).toMatchObject({ tid: tenant.body.id, trole: role.body.name });
    const added = (await app.ctx.db.all<{ data: string }>("SELECT data FROM core_events WHERE scope = ? AND type = 'tenant.member.added'", `webhook:auth:${a.id}`)).map((e) => JSON.parse(e.data));
    expect(added).toContainEqual(expect.objectContaining({ tenant_id: tenant.body.id, user_id: userId, roles: [role.body.name] }));
  });
});

describe("409 and 410", () => {
  test("duplicate email or username: 409, and the use is given back", async () => {
    const existing = await signupEndUser(app, a, { username: uniq("taken"), email: `${uniq("taken")}@example.com` });
    const inv = await invite({ max_uses: 3 });
    const dupEmail = await accept({ code: inv.code, email: existing.email });
    expect(dupEmail.status).toBe(409);
    expect(dupEmail.body.error.code).toBe("EMAIL_TAKEN");
    const dupName = await accept({ code: inv.code, email: `${uniq()}@example.com`, username: existing.username });
    expect(dupName.status).toBe(409);
    expect(dupName.body.error.code).toBe("USERNAME_TAKEN");
    expect((await listInvites()).body.data.find((i: any) => i.id === inv.id).uses).toBe(0);
    // Creating an invite for an address that already has an account is refused up front.
    const r = await app.call("POST", a.path("/invites"), { token: a.key, body: { email: existing.email } });
    expect(r.status).toBe(409);
  });

  test("a revoked invite answers 410 INVITE_REVOKED; revoke is idempotent, unknown ids 404", async () => {
    const inv = await invite({ email: `${uniq()}@example.com` });
    expect((await app.call("DELETE", a.path(`/invites/${inv.id}`), { token: a.key })).status).toBe(204);
    expect((await app.call("DELETE", a.path(`/invites/${inv.id}`), { token: a.key })).status).toBe(204);
    expect((await app.call("DELETE", a.path(`/invites/00000000-0000-7000-8000-000000000000`), { token: a.key })).status).toBe(404);
    const r = await accept({ code: inv.code });
    expect(r.status).toBe(410);
    expect(r.body.error.code).toBe("INVITE_REVOKED");
    expect((await listInvites()).body.data.find((i: any) => i.id === inv.id)).toMatchObject({ status: "revoked" });
  });

  inProcess("moves the injected clock to the expiry instant")("expiry: accepted one second before expires_at, 410 INVITE_EXPIRED at it", async () => {
    const early = await invite({ email: `${uniq()}@example.com`, expires_in: 60 });
    const late = await invite({ email: `${uniq()}@example.com`, expires_in: 60 });
    app.clock.advance(59 * SECOND);
    expect((await accept({ code: early.code })).status).toBe(200);
    app.clock.advance(1 * SECOND);
    const r = await accept({ code: late.code });
    expect(r.status).toBe(410);
    expect(r.body.error.code).toBe("INVITE_EXPIRED");
  });

  test("max_uses 2: two accepts succeed, the third answers 410 INVITE_EXHAUSTED", async () => {
    const inv = await invite({ max_uses: 2 });
    for (let i = 0; i < 2; i++) expect((await accept({ code: inv.code, email: `${uniq()}@example.com` })).status).toBe(200);
    const third = await accept({ code: inv.code, email: `${uniq()}@example.com` });
    expect(third.status).toBe(410);
    expect(third.body.error.code).toBe("INVITE_EXHAUSTED");
  });

  test("two concurrent accepts of a single-use invite: exactly one wins", async () => {
    const inv = await invite();
    const results = await Promise.all([
      accept({ code: inv.code, email: `${uniq()}@example.com` }),
      accept({ code: inv.code, email: `${uniq()}@example.com` }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 410]);
    expect(results.find((r) => r.status === 410)!.body.error.code).toBe("INVITE_EXHAUSTED");
    expect((await listInvites()).body.data.find((i: any) => i.id === inv.id).uses).toBe(1);
  });

  test("unknown code 404, malformed code 400, another App's code 404", async () => {
    const unknown = await accept({ code: `inv_${"A".repeat(32)}` });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("INVITE_NOT_FOUND");
    expect((await accept({ code: "nope" })).status).toBe(400);
    const other = await createAuthApp(app);
    const inv = await invite({ email: `${uniq()}@example.com` }, other);
    expect((await accept({ code: inv.code })).status).toBe(404);
    expect((await accept({ code: inv.code }, other)).status).toBe(200);
  });
});

describe("validation, listing and access", () => {
  test("limits are checked at their edges", async () => {
    const bad = async (body: Record<string, unknown>, field: string) => {
      const r = await app.call("POST", a.path("/invites"), { token: a.key, body });
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.body.error)).toContain(field);
    };
    await bad({ max_uses: 0 }, "max_uses");
    await bad({ max_uses: 1001 }, "max_uses");
    await bad({ expires_in: 59 }, "expires_in");
    await bad({ expires_in: 30 * 24 * 3600 + 1 }, "expires_in");
    await bad({ email: `${uniq()}@example.com`, max_uses: 2 }, "max_uses");
    await bad({ role: "no-such-role" }, "role");
    await bad({ tenant_id: "tnt_000000000000" }, "tenant_id");
    await bad({ send_email: true }, "send_email");
    await bad({ email: "not-an-email" }, "email");
    await bad({ email: `${uniq()}@example.com`, accept_url: "https://evil.example.net/join" }, "accept_url");
    expect((await invite({ max_uses: 1000, expires_in: 60 })).max_uses).toBe(1000);
    expect((await invite({ expires_in: 30 * 24 * 3600 })).status).toBe("active");
  });

  inProcess("moves the injected clock between creations and past expiries")("cursor pages newest first and status filters", async () => {
    const b = await createAuthApp(app);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await invite({}, b)).id);
      app.clock.advance(SECOND);
    }
    await app.call("DELETE", b.path(`/invites/${ids[0]}`), { token: b.key });
    const p1 = await app.call("GET", b.path("/invites?limit=2"), { token: b.key });
    expect(p1.body.data.map((i: any) => i.id)).toEqual([ids[2], ids[1]]);
    expect(p1.body.pagination.has_more).toBe(true);
    const p2 = await app.call("GET", b.path(`/invites?limit=2&cursor=${p1.body.pagination.next_cursor}`), { token: b.key });
    expect(p2.body.data.map((i: any) => i.id)).toEqual([ids[0]]);
    expect(p2.body.pagination).toEqual({ next_cursor: null, has_more: false });
    const revoked = await app.call("GET", b.path("/invites?status=revoked"), { token: b.key });
    expect(revoked.body.data.map((i: any) => i.id)).toEqual([ids[0]]);
    const active = await app.call("GET", b.path("/invites?status=active"), { token: b.key });
    expect(active.body.data.map((i: any) => i.id)).toEqual([ids[2], ids[1]]);
    app.clock.advance(8 * 24 * 3600 * SECOND);
    const expired = await app.call("GET", b.path("/invites?status=expired"), { token: b.key });
    expect(expired.body.data.map((i: any) => i.id)).toEqual([ids[2], ids[1]]);
    expect((await app.call("GET", b.path("/invites?status=bogus"), { token: b.key })).status).toBe(400);
    expect((await app.call("GET", b.path("/invites?cursor=%%%"), { token: b.key })).status).toBe(400);
  });

  test("admin routes need a credential of the App's workspace; end-user tokens are refused", async () => {
    expect((await app.call("POST", a.path("/invites"), { body: {} })).status).toBe(401);
    const stranger = await ownerWithKey(app);
    expect((await app.call("GET", a.path("/invites"), { token: stranger.token })).status).toBe(404);
    const user = await signupEndUser(app, a, { username: uniq("eu"), email: `${uniq("eu")}@example.com` });
    expect((await app.call("POST", a.path("/invites"), { token: user.access, body: {} })).status).toBe(401);
  });
});
