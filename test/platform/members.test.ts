import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DAY } from "../../src/core/clock";
import { createWorkspace, signup, startTestApp, startTestAppWithMail, type TestApp } from "../helpers/app";
import { accountIdOf, addMember, auditActions, BUILTIN, P, queuedInviteToken } from "../helpers/members";
import type { SmtpSink } from "../helpers/smtp-sink";
import { inProcess } from "../helpers/target";

let app: TestApp;
let sink: SmtpSink;
let stop: () => Promise<void>;
beforeAll(async () => {
  // Far more console sign-ups from one address than SIGNUPS_PER_ADDRESS_PER_HOUR's default.
  ({ app, sink, stop } = await startTestAppWithMail({ SIGNUPS_PER_ADDRESS_PER_HOUR: "0" }));
});
afterAll(() => stop());

const invite = (token: string, slug: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
  app.call("POST", `${P}/workspaces/${slug}/invitations`, { token, body, headers });
const accept = (token: string, inviteToken: string) => app.call("POST", `${P}/invitations/accept`, { token, body: { token: inviteToken } });
const members = (token: string, slug: string, q = "") => app.call("GET", `${P}/workspaces/${slug}/members${q}`, { token });
const setRole = (token: string, slug: string, memberId: string, role_id: string) =>
  app.call("PATCH", `${P}/workspaces/${slug}/members/${memberId}`, { token, body: { role_id } });
const removeMember = (token: string, slug: string, memberId: string) => app.call("DELETE", `${P}/workspaces/${slug}/members/${memberId}`, { token });

async function ownerWithWorkspace() {
  const owner = await signup(app);
  const ws = await createWorkspace(app, owner.token);
  const me = (await members(owner.token, ws.slug)).body.data[0];
  return { owner, ws, ownerMemberId: me.id as string };
}

describe("invitations", () => {
  inProcess("delivers the mail queue by hand, reads the stored token hash and audit rows (app.ctx) and compares joined_at with the frozen injected clock")("invite -> real SMTP delivery -> accept: the new member is listed with the invited role", async () => {
    const { owner, ws } = await ownerWithWorkspace();
    const bob = await signup(app);
    const r = await invite(owner.token, ws.slug, { email: bob.email.toUpperCase(), role_id: BUILTIN.admin });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ email: bob.email.toLowerCase(), role_id: BUILTIN.admin, role: "admin", invited_by: await accountIdOf(app, owner.token) });
    expect(Date.parse(r.body.expires_at) - Date.parse(r.body.created_at)).toBe(7 * DAY);
    expect(JSON.stringify(r.body)).not.toContain("token");

    await app.ctx.mailer.deliverPending();
    const mail = await sink.waitFor((m) => m.to.includes(bob.email.toLowerCase()));
    expect(mail.subject).toContain(`Workspace ${ws.slug}`);
    const link = /http:\/\/localhost:8080\/admin\/#invite=([A-Za-z0-9_-]{43})/.exec(mail.text);
    expect(link).not.toBeNull();
    // Only the hash is stored.
    const stored = (await app.ctx.db.get<{ token_hash: string }>("SELECT token_hash FROM platform_invitations WHERE id = ?", r.body.id))!;
    expect(stored.token_hash).not.toBe(link![1]);

    const ok = await accept(bob.token, link![1]);
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ workspace_id: ws.id, workspace_slug: ws.slug, role: "admin" });
    const list = await members(owner.token, ws.slug);
    const row = list.body.data.find((m: any) => m.email === bob.email.toLowerCase());
    expect(row).toMatchObject({ id: ok.body.member_id, username: bob.username, role_id: BUILTIN.admin, role: "admin", account_id: await accountIdOf(app, bob.token) });
    expect(row.joined_at).toBe(app.clock.iso());
    // The token is single use; the invitation is no longer pending.
    expect((await accept(bob.token, link![1])).status).toBe(404);
    expect((await app.call("GET", `${P}/workspaces/${ws.slug}/invitations`, { token: owner.token })).body.data).toEqual([]);
    const actions = (await auditActions(app, ws.id)).map((a) => a.action);
    expect(actions).toContain("member.invite");
    expect(actions).toContain("member.join");
  });

  inProcess("moves the injected clock 7 days for the expiry and reads audit rows from the store (auditActions)")("email mismatch, unknown token, expired, revoked: one 404 INVITATION_NOT_FOUND", async () => {
    const { owner, ws } = await ownerWithWorkspace();
    const carol = await signup(app);
    const mallory = await signup(app);
    await invite(owner.token, ws.slug, { email: carol.email });
    const token = await queuedInviteToken(app, carol.email, sink);

    const mismatch = await accept(mallory.token, token);
    const unknown = await accept(carol.token, "x".repeat(43));
    expect(mismatch.status).toBe(404);
    expect(mismatch.body.error.code).toBe("INVITATION_NOT_FOUND");
    expect(unknown.body).toEqual(mismatch.body);

    const dave = await signup(app);
    const inv = await invite(owner.token, ws.slug, { email: dave.email });
    const daveToken = await queuedInviteToken(app, dave.email, sink);
    const revoked = await app.call("DELETE", `${P}/workspaces/${ws.slug}/invitations/${inv.body.id}`, { token: owner.token });
    expect(revoked.status).toBe(204);
    expect((await app.call("DELETE", `${P}/workspaces/${ws.slug}/invitations/${inv.body.id}`, { token: owner.token })).status).toBe(404);
    const afterRevoke = await accept(dave.token, daveToken);
    expect(afterRevoke.status).toBe(404);
    expect(afterRevoke.body).toEqual(mismatch.body);
    expect((await auditActions(app, ws.id)).map((a) => a.action)).toContain("member.invite.revoke");

    app.clock.advance(7 * DAY);
    // Console access tokens live an hour: sign in again a week later.
    const signin = async (u: { email: string; password: string }) =>
      (await app.call("POST", `${P}/auth/signin`, { body: { identifier: u.email, password: u.password } })).body.access_token as string;
    const expired = await accept(await signin(carol), token);
    expect(expired.status).toBe(404);
    expect(expired.body).toEqual(mismatch.body);
    expect((await app.call("GET", `${P}/workspaces/${ws.slug}/invitations`, { token: await signin(owner) })).body.data).toEqual([]);
  });

  inProcess("reads audit rows from the store (auditActions)")("accepting needs a signed-in human; an API key can invite (on behalf of its minter) but not accept", async () => {
    expect((await app.call("POST", `${P}/invitations/accept`, { body: { token: "abc" } })).status).toBe(401);
    const { owner, ws } = await ownerWithWorkspace();
    const minted = await app.call("POST", `${P}/workspaces/${ws.slug}/api-keys`, {
      token: owner.token,
      // Enough to hand out the built-in member role (whose actions the key must hold itself).
      body: { name: "inviter", policy: [{ effect: "allow", actions: ["member.*", "workspace.read", "role.list", "role.read", "service.list", "auth.*", "tack.*", "social.*", "mail.*", "waitlist.*", "trawl.*"], resources: ["*"] }] },
    });
    expect(minted.status).toBe(201);
    const key = minted.body.key as string;
    const henry = await signup(app);
    const r = await invite(key, ws.slug, { email: henry.email });
    expect(r.status).toBe(201);
    expect(r.body.invited_by).toBe(await accountIdOf(app, owner.token));
    expect((await auditActions(app, ws.id)).at(-1)).toMatchObject({ action: "member.invite", actor_id: minted.body.id });
    const byKey = await accept(key, await queuedInviteToken(app, henry.email, sink));
    expect(byKey.status).toBe(403);
    expect(byKey.body.error.code).toBe("HUMAN_REQUIRED");
    // An owner invitation is beyond any key; admin is beyond this one's policy.
    expect((await invite(key, ws.slug, { email: "k@example.com", role_id: BUILTIN.owner })).status).toBe(403);
    expect((await invite(key, ws.slug, { email: "k@example.com", role_id: BUILTIN.admin })).body.error.code).toBe("ROLE_EXCEEDS_CALLER");
  });

  test("re-inviting replaces the pending invitation; the old token stops working", async () => {
    const { owner, ws } = await ownerWithWorkspace();
    const erin = await signup(app);
    const first = await invite(owner.token, ws.slug, { email: erin.email });
    const oldToken = await queuedInviteToken(app, erin.email, sink);
    const second = await invite(owner.token, ws.slug, { email: erin.email, role_id: BUILTIN.admin });
    expect(second.status).toBe(201);
    expect(second.body.id).not.toBe(first.body.id);
    const newToken = await queuedInviteToken(app, erin.email, sink);
    expect(newToken).not.toBe(oldToken);
    const pending = (await app.call("GET", `${P}/workspaces/${ws.slug}/invitations`, { token: owner.token })).body.data;
    expect(pending.map((i: any) => i.id)).toEqual([second.body.id]);
    expect((await accept(erin.token, oldToken)).status).toBe(404);
    const ok = await accept(erin.token, newToken);
    expect(ok.status).toBe(201);
    expect(ok.body.role).toBe("admin");
  });

  test("existing members: inviting is 409 ALREADY_MEMBER, accepting is 409", async () => {
    const { owner, ws } = await ownerWithWorkspace();
    const frank = await addMember(app, owner.token, ws.slug, undefined, sink);
    const r = await invite(owner.token, ws.slug, { email: frank.email.toUpperCase() });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("ALREADY_MEMBER");
    // An invitation sent before the person joined through another one.
    const gina = await signup(app);
    await invite(owner.token, ws.slug, { email: gina.email });
    const t1 = await queuedInviteToken(app, gina.email, sink);
    const other = await createWorkspace(app, owner.token);
    await invite(owner.token, other.slug, { email: gina.email });
    expect((await accept(gina.token, await queuedInviteToken(app, gina.email, sink))).status).toBe(201);
    expect((await accept(gina.token, t1)).status).toBe(201);
    expect((await invite(owner.token, ws.slug, { email: gina.email })).status).toBe(409);
  });

  inProcess("counts the queued system mail in the store (app.ctx.mailer) to show no second mail was queued")("Idempotency-Key: a retry replays the answer and sends no second mail", async () => {
    const { owner, ws } = await ownerWithWorkspace();
    const email = `idem-${Date.now()}@example.com`;
    const headers = { "idempotency-key": `invite-${Date.now()}` };
    const a = await invite(owner.token, ws.slug, { email }, headers);
    const b = await invite(owner.token, ws.slug, { email }, headers);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body).toEqual(a.body);
    expect(b.headers.get("idempotent-replay")).toBe("true");
    expect((await app.ctx.mailer.list(500)).filter((m) => m.to === email)).toHaveLength(1);
    const c = await invite(owner.token, ws.slug, { email: `other-${email}` }, headers);
    expect(c.status).toBe(409);
    expect(c.body.error.code).toBe("IDEMPOTENCY_KEY_REUSE");
  });

  test("validation: bad email or malformed role_id 400, another workspace's or unknown role 404", async () => {
    const { owner, ws } = await ownerWithWorkspace();
    const bad = await invite(owner.token, ws.slug, { email: "not-an-email" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe("email");
    const other = await ownerWithWorkspace();
    const foreignRole = await app.call("POST", `${P}/workspaces/${other.ws.slug}/roles`, {
      token: other.owner.token,
      body: { name: "viewer", policy: [{ effect: "allow", actions: ["workspace.read"], resources: ["*"] }] },
    });
    expect(foreignRole.status).toBe(201);
    expect((await invite(owner.token, ws.slug, { email: "x@example.com", role_id: foreignRole.body.id })).status).toBe(404);
    expect((await invite(owner.token, ws.slug, { email: "x@example.com", role_id: crypto.randomUUID() })).status).toBe(404);
    // A role_id that is no UUID at all is malformed input, not an unknown role.
    expect((await invite(owner.token, ws.slug, { email: "x@example.com", role_id: "nope" })).status).toBe(400);
  });

  test("member role gets 403 on member.create; only owners invite owners; admins can't invite above themselves", async () => {
    const { owner, ws } = await ownerWithWorkspace();
    const plain = await addMember(app, owner.token, ws.slug, undefined, sink);
    const r = await invite(plain.token, ws.slug, { email: "y@example.com" });
    expect(r.status).toBe(403);
    const admin = await addMember(app, owner.token, ws.slug, BUILTIN.admin, sink);
    const asOwner = await invite(admin.token, ws.slug, { email: "z@example.com", role_id: BUILTIN.owner });
    expect(asOwner.status).toBe(403);
    expect(asOwner.body.error.code).toBe("OWNER_REQUIRED");
    const powerful = await app.call("POST", `${P}/workspaces/${ws.slug}/roles`, {
      token: owner.token,
      body: { name: "deleter", policy: [{ effect: "allow", actions: ["workspace.delete"], resources: ["*"] }] },
    });
    const above = await invite(admin.token, ws.slug, { email: "z@example.com", role_id: powerful.body.id });
    expect(above.status).toBe(403);
    expect(above.body.error.code).toBe("ROLE_EXCEEDS_CALLER");
    expect((await invite(admin.token, ws.slug, { email: "z@example.com", role_id: BUILTIN.admin })).status).toBe(201);
    expect((await invite(owner.token, ws.slug, { email: "o@example.com", role_id: BUILTIN.owner })).status).toBe(201);
  });
});

describe("members", () => {
  test("last owner can neither leave, be removed nor be demoted (409 LAST_OWNER)", async () => {
    const { owner, ws, ownerMemberId } = await ownerWithWorkspace();
    const leave = await removeMember(owner.token, ws.slug, ownerMemberId);
    expect(leave.status).toBe(409);
    expect(leave.body.error.code).toBe("LAST_OWNER");
    const demote = await setRole(owner.token, ws.slug, ownerMemberId, BUILTIN.admin);
    expect(demote.status).toBe(409);
    expect(demote.body.error.code).toBe("LAST_OWNER");

    // With a second owner, the first may leave; then the second is the last one.
    const second = await addMember(app, owner.token, ws.slug, BUILTIN.owner, sink);
    const removeLast = await removeMember(second.token, ws.slug, ownerMemberId);
    expect(removeLast.status).toBe(204);
    expect((await removeMember(second.token, ws.slug, second.memberId)).body.error.code).toBe("LAST_OWNER");
    expect((await setRole(second.token, ws.slug, second.memberId, BUILTIN.member)).body.error.code).toBe("LAST_OWNER");
    // The removed owner has no access any more: 404, not 403.
    expect((await members(owner.token, ws.slug)).status).toBe(404);
  });

  inProcess("reads audit rows from the store (auditActions)")("an owner may step down once another owner exists", async () => {
    const { owner, ws, ownerMemberId } = await ownerWithWorkspace();
    const other = await addMember(app, owner.token, ws.slug, undefined, sink);
    expect((await setRole(owner.token, ws.slug, other.memberId, BUILTIN.owner)).body.role).toBe("owner");
    const down = await setRole(owner.token, ws.slug, ownerMemberId, BUILTIN.member);
    expect(down.status).toBe(200);
    expect(down.body).toMatchObject({ id: ownerMemberId, role_id: BUILTIN.member, role: "member" });
    const actions = (await auditActions(app, ws.id)).filter((a) => a.action === "member.update");
    expect(actions.map((a) => a.target_id)).toEqual([other.memberId, ownerMemberId]);
  });

  test("only owners grant or take away the owner role", async () => {
    const { owner, ws, ownerMemberId } = await ownerWithWorkspace();
    const admin = await addMember(app, owner.token, ws.slug, BUILTIN.admin, sink);
    const plain = await addMember(app, owner.token, ws.slug, undefined, sink);
    const grant = await setRole(admin.token, ws.slug, plain.memberId, BUILTIN.owner);
    expect(grant.status).toBe(403);
    expect(grant.body.error.code).toBe("OWNER_REQUIRED");
    const selfPromote = await setRole(admin.token, ws.slug, admin.memberId, BUILTIN.owner);
    expect(selfPromote.status).toBe(403);
    const second = await addMember(app, owner.token, ws.slug, BUILTIN.owner, sink);
    expect((await setRole(admin.token, ws.slug, second.memberId, BUILTIN.member)).status).toBe(403);
    expect((await removeMember(admin.token, ws.slug, ownerMemberId)).body.error.code).toBe("OWNER_REQUIRED");
    // Admins manage non-owners freely.
    expect((await setRole(admin.token, ws.slug, plain.memberId, BUILTIN.admin)).status).toBe(200);
    expect((await removeMember(admin.token, ws.slug, plain.memberId)).status).toBe(204);
  });

  inProcess("reads audit rows from the store (auditActions)")("a member without member.delete may leave but not remove others", async () => {
    const { owner, ws } = await ownerWithWorkspace();
    const a = await addMember(app, owner.token, ws.slug, undefined, sink);
    const b = await addMember(app, owner.token, ws.slug, undefined, sink);
    expect((await removeMember(a.token, ws.slug, b.memberId)).status).toBe(403);
    expect((await setRole(a.token, ws.slug, a.memberId, BUILTIN.admin)).status).toBe(403);
    expect((await removeMember(a.token, ws.slug, a.memberId)).status).toBe(204);
    expect((await members(a.token, ws.slug)).status).toBe(404);
    const audit = (await auditActions(app, ws.id));
    expect(audit.at(-1)).toMatchObject({ action: "member.leave", target_id: a.memberId, actor_id: a.accountId });
  });

  test("another workspace's member ids, unknown workspaces and non-members are 404", async () => {
    const one = await ownerWithWorkspace();
    const two = await ownerWithWorkspace();
    const x = await addMember(app, two.owner.token, two.ws.slug, undefined, sink);
    expect((await setRole(one.owner.token, one.ws.slug, x.memberId, BUILTIN.admin)).status).toBe(404);
    expect((await removeMember(one.owner.token, one.ws.slug, x.memberId)).status).toBe(404);
    expect((await members(one.owner.token, two.ws.slug)).status).toBe(404);
    expect((await members(one.owner.token, "no-such-workspace")).status).toBe(404);
    expect((await setRole(one.owner.token, one.ws.slug, one.ownerMemberId, "00000000-0000-7000-8000-00000000dead")).status).toBe(404);
    const inv = await invite(two.owner.token, two.ws.slug, { email: "q@example.com" });
    expect((await app.call("DELETE", `${P}/workspaces/${one.ws.slug}/invitations/${inv.body.id}`, { token: one.owner.token })).status).toBe(404);
    expect((await members(x.token, two.ws.slug)).status).toBe(200);
  });

  test("pagination: limit boundary, cursor walk, malformed cursor 400", async () => {
    const { owner, ws } = await ownerWithWorkspace();
    for (let i = 0; i < 2; i++) await addMember(app, owner.token, ws.slug, undefined, sink);
    const all = await members(owner.token, ws.slug, "?limit=3");
    expect(all.body.data).toHaveLength(3);
    expect(all.body.pagination).toEqual({ next_cursor: null, has_more: false });
    const p1 = await members(owner.token, ws.slug, "?limit=2");
    expect(p1.body.data).toHaveLength(2);
    expect(p1.body.pagination.has_more).toBe(true);
    const p2 = await members(owner.token, ws.slug, `?limit=2&cursor=${p1.body.pagination.next_cursor}`);
    expect(p2.body.data).toHaveLength(1);
    expect(p2.body.pagination).toEqual({ next_cursor: null, has_more: false });
    expect([...p1.body.data, ...p2.body.data].map((m: any) => m.id)).toEqual(all.body.data.map((m: any) => m.id));
    expect((await members(owner.token, ws.slug, "?cursor=!!bad")).status).toBe(400);
    expect((await members(owner.token, ws.slug, "?limit=0")).status).toBe(400);
    expect((await members(owner.token, ws.slug, "?limit=101")).status).toBe(400);

    for (let i = 0; i < 3; i++) await invite(owner.token, ws.slug, { email: `page${i}-${Date.now()}@example.com` });
    const i1 = await app.call("GET", `${P}/workspaces/${ws.slug}/invitations?limit=2`, { token: owner.token });
    expect(i1.body.data).toHaveLength(2);
    const i2 = await app.call("GET", `${P}/workspaces/${ws.slug}/invitations?limit=2&cursor=${i1.body.pagination.next_cursor}`, { token: owner.token });
    expect(i2.body.data).toHaveLength(1);
    expect(i2.body.pagination.has_more).toBe(false);
    expect((await app.call("GET", `${P}/workspaces/${ws.slug}/invitations?cursor=e30`, { token: owner.token })).status).toBe(200);
    expect((await app.call("GET", `${P}/workspaces/${ws.slug}/invitations?cursor=%%%`, { token: owner.token })).status).toBe(400);
  });

  test("every mutation is in the audit log (read through the audit route)", async () => {
    const { owner, ws } = await ownerWithWorkspace();
    const m = await addMember(app, owner.token, ws.slug, undefined, sink);
    await setRole(owner.token, ws.slug, m.memberId, BUILTIN.admin);
    await removeMember(owner.token, ws.slug, m.memberId);
    const r = await app.call("GET", `${P}/workspaces/${ws.slug}/audit-log?action=member.*`, { token: owner.token });
    expect(r.status).toBe(200);
    expect(r.body.data.map((e: any) => e.action).reverse()).toEqual(["member.invite", "member.join", "member.update", "member.delete"]);
  });
});
