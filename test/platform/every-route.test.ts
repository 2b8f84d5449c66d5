/**
 * Every OpenAPI operation of the platform service (/platform/v1/...), walked over HTTP the
 * way an operator and console users use the product, each answered with success at least
 * once and checked by reading the state back:
 * first-run setup with the one-time link, sign-up/in, refresh, logout, the password reset
 * with the code read from a real SMTP sink, MFA with TOTP codes computed by the independent
 * `otpauth` library (verify, recover, regenerate, disable, the operator's reset), console
 * federated sign-in against two real OpenID providers on loopback (query and form_post
 * callbacks, identities, unlink), workspaces and their avatar, introspection, service
 * activation, API keys, personal access tokens, roles, invitations (mailed), members, the
 * audit log, and the operator routes (accounts, status changes, database backup).
 *
 * Runs unchanged in-process (`npx bun test`, SQLite or PostgreSQL) and against the binary
 * (`npm run test:bin`). Two start-up steps of `bunker serve` are the process's own on the
 * binary; in-process, the lines marked "as bunker serve does" do the same: the scheduler
 * (it sends the queued system mail) and the first-start bootstrap (it mints the setup link,
 * which the binary printed to its log). Mail is waited for with a deadline, never a sleep.
 * Timestamps are checked for shape and order, not against a clock.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as OTPAuth from "otpauth";
import { signup, startTestAppWithMail, type TestApp } from "../helpers/app";
import type { BinaryProcess } from "../helpers/binary";
import { TEST_ENGINE } from "../helpers/engine";
import { startOidcProvider, type CallbackRequest, type OidcProvider } from "../helpers/oidc-provider";
import type { SmtpSink } from "../helpers/smtp-sink";
import { ON_BINARY } from "../helpers/target";
import { totp, totpTime } from "../helpers/totp";

const P = "/platform/v1";
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const BUILTIN_MEMBER = "00000000-0000-7000-8000-000000000003";
const RETURN_TO = "https://console.example.com/after?x=1";
/** A PNG signature plus the start of an IHDR chunk: the avatar type is detected from content. */
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82]);

let app: TestApp;
let sink: SmtpSink;
let stopApp: () => Promise<void>;
let idp1: OidcProvider;
let idp2: OidcProvider;
/** The operator's console session (created through the setup link in the first test). */
let operator: string;

beforeAll(async () => {
  idp1 = await startOidcProvider({ now: () => app.clock.nowMs(), sendUserJson: true });
  idp2 = await startOidcProvider({ now: () => app.clock.nowMs() });
  ({ app, sink, stop: stopApp } = await startTestAppWithMail({
    ALLOW_PRIVATE_TARGETS: "true",
    OAUTH_RETURN_TO_ORIGINS: "https://console.example.com",
    IDP_1_ISSUER: idp1.issuer,
    IDP_1_CLIENT_ID: idp1.clientId,
    IDP_1_CLIENT_SECRET: idp1.clientSecret,
    IDP_2_ISSUER: idp2.issuer,
    IDP_2_CLIENT_ID: idp2.clientId,
    IDP_2_CLIENT_SECRET: idp2.clientSecret,
  }));
  // The process of `bunker serve` runs its scheduler; the in-process app starts it the same way.
  if (!ON_BINARY) app.ctx.scheduler.start();
});
afterAll(async () => {
  await stopApp?.();
  idp1?.stop();
  idp2?.stop();
});

/** The one-time setup token of this start: printed by the binary; minted in-process by the bootstrap `bunker serve` runs. */
async function setupToken(): Promise<string> {
  if (ON_BINARY) {
    const output = (app as unknown as { process: BinaryProcess }).process.output();
    const m = /#setup=([A-Za-z0-9_-]{40,})/.exec(output);
    if (!m) throw new Error(`the binary printed no setup link:\n${output.slice(-2000)}`);
    return m[1];
  }
  const boot = await app.platform.setup.bootstrap();
  return boot!.setupUrl!.split("#setup=")[1];
}

/** The newest mail to `to` whose subject contains `about`, delivered by the scheduler through the SMTP sink. */
async function mailTo(to: string, about: string, after = 0) {
  const match = (m: (typeof sink.messages)[number]) => m.to.includes(to.toLowerCase()) && m.subject.toLowerCase().includes(about);
  await sink.waitFor(() => sink.messages.filter(match).length > after, 20_000);
  return sink.messages.filter(match).at(-1)!;
}

const signin = (identifier: string, password: string) => app.call("POST", `${P}/auth/signin`, { body: { identifier, password } });
const introspect = (token: string) => app.call("GET", `${P}/introspect`, { token });
const accountId = async (token: string) => (await introspect(token)).body.account.id as string;
const sendCallback = (cb: CallbackRequest) =>
  cb.method === "GET" ? app.call("GET", cb.path) : app.call("POST", cb.path, { body: cb.form!.toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
const auditLog = async (token: string, slug: string, q = "") => {
  const r = await app.call("GET", `${P}/workspaces/${slug}/audit-log${q}`, { token });
  expect(r.status).toBe(200);
  return r.body.data as { action: string; actor: { type: string; id: string | null }; target: unknown; created_at: string }[];
};

describe("platform: every operation over HTTP", () => {
  test("first start: GET/POST /auth/setup create the operator once with the one-time link", async () => {
    expect(await app.call("GET", `${P}/auth/setup`)).toMatchObject({ status: 200, body: { needs_setup: true } });
    const token = await setupToken();
    const body = { email: "ops@example.com", username: "ops", password: "operator-password-1", display_name: "Ops" };
    const wrong = await app.call("POST", `${P}/auth/setup`, { body: { ...body, setup_token: `${token}x` } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.code).toBe("INVALID_SETUP_TOKEN");
    const ok = await app.call("POST", `${P}/auth/setup`, { body: { ...body, setup_token: token } });
    expect(ok.status).toBe(200);
    // (No asymmetric matchers inside toMatchObject here: Bun 1.4.5 writes them into the received object.)
    expect(ok.body.token_type).toBe("Bearer");
    expect(ok.body.access_token).toBeString();
    expect(ok.body.refresh_token).toBeString();
    expect(ok.headers.get("set-cookie")).toContain("auth_token=");
    operator = ok.body.access_token;
    const me = await introspect(operator);
    expect(me.body.account).toMatchObject({ email: "ops@example.com", username: "ops", is_operator: true });
    expect((await app.call("GET", `${P}/auth/setup`)).body).toEqual({ needs_setup: false });
    // Exactly once.
    const again = await app.call("POST", `${P}/auth/setup`, { body: { ...body, email: "b@example.com", username: "b", setup_token: token } });
    expect(again.status).toBe(400);
  });

  test("sign-up, sign-in, refresh, logout, logout-current; password reset with the mailed code", async () => {
    const email = `reset-${Date.now()}@example.com`;
    const up = await app.call("POST", `${P}/auth/signup`, { body: { email, username: `reset_${Date.now()}`, password: "first password 1", display_name: "Rita" } });
    expect(up.status).toBe(200);
    expect(up.body.token_type).toBe("Bearer");
    expect(up.body.expires_in).toBeGreaterThan(0);
    expect(up.headers.get("set-cookie")).toContain("auth_token=");
    expect((await introspect(up.body.access_token)).body).toMatchObject({ is_authenticated: true, account: { email, display_name: "Rita" } });

    const inn = await signin(email, "first password 1");
    expect(inn.status).toBe(200);
    // Refresh rotates: the new pair works, the presented refresh token is spent.
    const ref = await app.call("POST", `${P}/auth/refresh`, { body: { refresh_token: inn.body.refresh_token } });
    expect(ref.status).toBe(200);
    expect(ref.body.refresh_token).not.toBe(inn.body.refresh_token);
    expect((await introspect(ref.body.access_token)).status).toBe(200);
    expect((await app.call("POST", `${P}/auth/refresh`, { body: { refresh_token: inn.body.refresh_token } })).status).toBe(400);
    // Logout ends the session of a refresh token.
    expect((await app.call("POST", `${P}/auth/logout`, { body: { refresh_token: ref.body.refresh_token } })).status).toBe(204);
    expect((await app.call("POST", `${P}/auth/refresh`, { body: { refresh_token: ref.body.refresh_token } })).status).toBe(400);
    // Logout-current ends the session of the presented access token.
    expect((await app.call("POST", `${P}/auth/logout-current`, { token: up.body.access_token })).status).toBe(204);
    expect((await introspect(up.body.access_token)).status).toBe(401);

    // Password reset: the same answer for an unknown address; the code arrives by SMTP.
    const other = await signin(email, "first password 1");
    expect(other.status).toBe(200);
    const known = await app.call("POST", `${P}/auth/password/request-reset`, { body: { email } });
    const unknown = await app.call("POST", `${P}/auth/password/request-reset`, { body: { email: `nobody-${Date.now()}@example.com` } });
    expect(known.status).toBe(204);
    expect(unknown.status).toBe(204);
    expect(known.body).toEqual(unknown.body);
    const mail = await mailTo(email, "password reset");
    const code = /\b(\d{6})\b/.exec(mail.text)![1];
    expect((await app.call("POST", `${P}/auth/password/reset`, { body: { token: code, new_password: "second password 2" } })).status).toBe(204);
    expect((await introspect(other.body.access_token)).status).toBe(401); // every session revoked
    expect((await signin(email, "first password 1")).status).toBe(401);
    expect((await signin(email, "second password 2")).status).toBe(200);
    expect((await app.call("POST", `${P}/auth/password/reset`, { body: { token: code, new_password: "third password 3" } })).status).toBe(400); // single use
  });

  test("workspaces, avatar, introspection and service activation", async () => {
    const u = await signup(app);
    const slug = `acme-${Date.now()}`;
    const c = await app.call("POST", `${P}/workspaces`, { token: u.token, body: { slug, display_name: "Acme" } });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({ slug, display_name: "Acme", status: "active", settings: {} });
    expect(c.body.created_at).toMatch(ISO);
    const ws = c.body as { id: string; slug: string };

    const list = await app.call("GET", `${P}/workspaces?limit=10`, { token: u.token });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([expect.objectContaining({ id: ws.id, slug, member_role: "owner" })]);
    expect(list.body.pagination).toEqual({ next_cursor: null, has_more: false });

    const renamed = `${slug}-2`;
    const p = await app.call("PATCH", `${P}/workspaces/${slug}`, { token: u.token, body: { slug: renamed, display_name: "Acme Two", settings: { theme: "dark" } } });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ id: ws.id, slug: renamed, display_name: "Acme Two", settings: { theme: "dark" } });
    expect(Date.parse(p.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(c.body.created_at));
    const got = await app.call("GET", `${P}/workspaces/${renamed}`, { token: u.token });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: ws.id, display_name: "Acme Two" });
    expect((await app.call("GET", `${P}/workspaces/${slug}`, { token: u.token })).status).toBe(404);

    // Avatar: multipart upload, then the public URL serves the same bytes.
    const form = new FormData();
    form.append("file", new Blob([PNG], { type: "application/octet-stream" }), "logo.bin");
    const up = await app.call("POST", `${P}/workspaces/${renamed}/avatar`, { token: u.token, body: form });
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ content_type: "image/png", size: PNG.length });
    const avatarPath = new URL(up.body.avatar_url, "http://x").pathname;
    expect(avatarPath).toStartWith(`${P}/avatars/${ws.id}`);
    const img = await app.handle(new Request(`http://localhost${new URL(up.body.avatar_url, "http://x").pathname}${new URL(up.body.avatar_url, "http://x").search}`));
    expect(img.status).toBe(200);
    expect(img.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await img.arrayBuffer())).toEqual(PNG);

    // Introspection: the caller, then their membership of the workspace.
    const me = await introspect(u.token);
    expect(me.status).toBe(200);
    expect(me.body.workspaces).toEqual([expect.objectContaining({ id: ws.id, slug: renamed, role: "owner" })]);
    const mem = await app.call("GET", `${P}/introspect/workspaces/${ws.id}`, { token: u.token });
    expect(mem.status).toBe(200);
    expect(mem.body).toMatchObject({ is_member: true, role: { name: "owner" } });
    expect(mem.body.services).toContain("tack");

    // Services: switch one off and on; the list and the introspection follow.
    const svc = await app.call("GET", `${P}/workspaces/${renamed}/services`, { token: u.token });
    expect(svc.status).toBe(200);
    expect(svc.body.data.find((s: any) => s.service === "tack")).toMatchObject({ enabled: true });
    const off = await app.call("DELETE", `${P}/workspaces/${renamed}/services/tack`, { token: u.token });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ service: "tack", enabled: false });
    expect((await app.call("GET", `${P}/introspect/workspaces/${ws.id}`, { token: u.token })).body.services).not.toContain("tack");
    const on = await app.call("PUT", `${P}/workspaces/${renamed}/services/tack`, { token: u.token });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ service: "tack", enabled: true });
    expect(on.body.enabled_at).toMatch(ISO);
    expect((await app.call("GET", `${P}/workspaces/${renamed}/services`, { token: u.token })).body.data.find((s: any) => s.service === "tack").enabled).toBe(true);

    // Delete: gone for its owner.
    expect((await app.call("DELETE", `${P}/workspaces/${renamed}`, { token: u.token })).status).toBe(204);
    expect((await app.call("GET", `${P}/workspaces/${renamed}`, { token: u.token })).status).toBe(404);
    expect((await app.call("GET", `${P}/workspaces`, { token: u.token })).body.data).toEqual([]);
  });

  test("API keys, personal access tokens and the audit log", async () => {
    const u = await signup(app);
    const slug = `keys-${Date.now()}`;
    const ws = (await app.call("POST", `${P}/workspaces`, { token: u.token, body: { slug, display_name: "Keys" } })).body;
    const policy = [{ effect: "allow", actions: ["workspace.read"], resources: ["*"] }];
    const minted = await app.call("POST", `${P}/workspaces/${slug}/api-keys`, { token: u.token, body: { name: "deploy bot", policy } });
    expect(minted.status).toBe(201);
    expect(minted.body.key).toMatch(/^svc_live_[0-9A-Za-z]{40}$/);
    expect(minted.body).toMatchObject({ name: "deploy bot", policy, revoked_at: null, last_four: minted.body.key.slice(-4) });
    const key = minted.body.key as string;

    const keys = await app.call("GET", `${P}/workspaces/${slug}/api-keys`, { token: u.token });
    expect(keys.status).toBe(200);
    expect(keys.body.data.map((k: any) => k.id)).toEqual([minted.body.id]);
    expect(JSON.stringify(keys.body)).not.toContain(key);
    const one = await app.call("GET", `${P}/workspaces/${slug}/api-keys/${minted.body.id}`, { token: u.token });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: minted.body.id, name: "deploy bot" });
    expect(one.body.key).toBeUndefined();

    // The key: introspection for downstream services, then use within its policy.
    const ik = await app.call("POST", `${P}/introspect/api-key`, { token: key });
    expect(ik.status).toBe(201);
    expect(ik.body).toEqual({ is_valid: true, workspace_id: ws.id, policy, created_by: await accountId(u.token), api_key_id: minted.body.id });
    expect((await app.call("GET", `${P}/workspaces/${slug}`, { token: key })).body.id).toBe(ws.id);
    expect((await app.call("PATCH", `${P}/workspaces/${slug}`, { token: key, body: { display_name: "no" } })).status).toBe(403);
    expect((await app.call("DELETE", `${P}/workspaces/${slug}/api-keys/${minted.body.id}`, { token: u.token })).status).toBe(204);
    expect((await app.call("GET", `${P}/workspaces/${slug}`, { token: key })).status).toBe(401);
    expect((await app.call("GET", `${P}/workspaces/${slug}/api-keys/${minted.body.id}`, { token: u.token })).body.revoked_at).toMatch(ISO);

    // Personal access tokens act as their user.
    const pat = await app.call("POST", `${P}/me/tokens`, { token: u.token, body: { name: "laptop", expires_in_days: 7 } });
    expect(pat.status).toBe(201);
    expect(pat.body.token).toMatch(/^pat_[0-9A-Za-z]{40}$/);
    expect(Date.parse(pat.body.expires_at) - Date.parse(pat.body.created_at)).toBe(7 * 24 * 3600 * 1000);
    expect((await introspect(pat.body.token)).body.account.id).toBe(await accountId(u.token));
    const pats = await app.call("GET", `${P}/me/tokens`, { token: u.token });
    expect(pats.status).toBe(200);
    expect(pats.body.data).toEqual([expect.objectContaining({ id: pat.body.id, name: "laptop", last_four: pat.body.token.slice(-4) })]);
    expect((await app.call("DELETE", `${P}/me/tokens/${pat.body.id}`, { token: u.token })).status).toBe(204);
    expect((await introspect(pat.body.token)).status).toBe(401);
    const revoked = (await app.call("GET", `${P}/me/tokens`, { token: u.token })).body.data.find((t: any) => t.id === pat.body.id);
    expect(revoked.revoked_at).toMatch(ISO);

    // The audit log of the workspace, newest first, filtered by a prefix pattern.
    const all = await auditLog(u.token, slug);
    expect(all.map((e) => e.action)).toEqual(["apikey.delete", "apikey.create", "workspace.create"]);
    for (let i = 1; i < all.length; i++) expect(all[i - 1].created_at >= all[i].created_at).toBe(true);
    const keyEvents = await auditLog(u.token, slug, "?action=apikey.*");
    expect(keyEvents.map((e) => e.action)).toEqual(["apikey.delete", "apikey.create"]);
    expect(keyEvents[0].actor).toEqual({ type: "account", id: await accountId(u.token) });
  });

  test("roles, invitations (mailed), accepting, members", async () => {
    const owner = await signup(app);
    const slug = `team-${Date.now()}`;
    const ws = (await app.call("POST", `${P}/workspaces`, { token: owner.token, body: { slug, display_name: "Team" } })).body;
    const policy = [{ effect: "allow", actions: ["workspace.read", "workspace.update"], resources: ["*"] }];

    const role = await app.call("POST", `${P}/workspaces/${slug}/roles`, { token: owner.token, body: { name: "editor", description: "Edits settings", policy } });
    expect(role.status).toBe(201);
    expect(role.body).toMatchObject({ name: "editor", description: "Edits settings", builtin: false, policy });
    const roles = await app.call("GET", `${P}/workspaces/${slug}/roles`, { token: owner.token });
    expect(roles.status).toBe(200);
    expect(roles.body.data.map((r: any) => r.name)).toEqual(["owner", "admin", "member", "editor"]);
    const got = await app.call("GET", `${P}/workspaces/${slug}/roles/${role.body.id}`, { token: owner.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(role.body);
    const patched = await app.call("PATCH", `${P}/workspaces/${slug}/roles/${role.body.id}`, { token: owner.token, body: { name: "writer", description: null } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: role.body.id, name: "writer", description: "", policy }); // null clears it

    // Invite two people; one accepts through the mailed link, the other invitation is withdrawn.
    const bob = await signup(app);
    const carol = await signup(app);
    const inv = await app.call("POST", `${P}/workspaces/${slug}/invitations`, { token: owner.token, body: { email: bob.email, role_id: role.body.id } });
    expect(inv.status).toBe(201);
    expect(inv.body).toMatchObject({ email: bob.email.toLowerCase(), role_id: role.body.id, role: "writer", invited_by: await accountId(owner.token) });
    const invCarol = await app.call("POST", `${P}/workspaces/${slug}/invitations`, { token: owner.token, body: { email: carol.email } });
    expect(invCarol.status).toBe(201);
    const pending = await app.call("GET", `${P}/workspaces/${slug}/invitations`, { token: owner.token });
    expect(pending.status).toBe(200);
    expect(pending.body.data.map((i: any) => i.id).sort()).toEqual([inv.body.id, invCarol.body.id].sort());
    expect((await app.call("DELETE", `${P}/workspaces/${slug}/invitations/${invCarol.body.id}`, { token: owner.token })).status).toBe(204);

    const mail = await mailTo(bob.email, "");
    const link = /\/admin\/#invite=([A-Za-z0-9_-]{20,})/.exec(mail.text);
    expect(link).not.toBeNull();
    const acc = await app.call("POST", `${P}/invitations/accept`, { token: bob.token, body: { token: link![1] } });
    expect(acc.status).toBe(201);
    expect(acc.body).toMatchObject({ workspace_id: ws.id, workspace_slug: slug, role: "writer" });
    expect((await app.call("GET", `${P}/workspaces/${slug}/invitations`, { token: owner.token })).body.data).toEqual([]);

    // The role decides: writer may update the workspace, and not mint roles.
    expect((await app.call("PATCH", `${P}/workspaces/${slug}`, { token: bob.token, body: { display_name: "Team (by Bob)" } })).status).toBe(200);
    expect((await app.call("POST", `${P}/workspaces/${slug}/roles`, { token: bob.token, body: { name: "x", policy } })).status).toBe(403);

    const members = await app.call("GET", `${P}/workspaces/${slug}/members`, { token: owner.token });
    expect(members.status).toBe(200);
    const row = members.body.data.find((m: any) => m.id === acc.body.member_id);
    expect(row).toMatchObject({ username: bob.username, role_id: role.body.id, role: "writer", account_id: await accountId(bob.token) });
    expect(row.joined_at).toMatch(ISO);

    // A role in use cannot go; demote Bob to member, then it can.
    expect((await app.call("DELETE", `${P}/workspaces/${slug}/roles/${role.body.id}`, { token: owner.token })).status).toBe(409);
    const demoted = await app.call("PATCH", `${P}/workspaces/${slug}/members/${acc.body.member_id}`, { token: owner.token, body: { role_id: BUILTIN_MEMBER } });
    expect(demoted.status).toBe(200);
    expect(demoted.body).toMatchObject({ id: acc.body.member_id, role_id: BUILTIN_MEMBER, role: "member" });
    expect((await app.call("PATCH", `${P}/workspaces/${slug}`, { token: bob.token, body: { display_name: "again" } })).status).toBe(403);
    expect((await app.call("DELETE", `${P}/workspaces/${slug}/roles/${role.body.id}`, { token: owner.token })).status).toBe(204);
    expect((await app.call("GET", `${P}/workspaces/${slug}/roles/${role.body.id}`, { token: owner.token })).status).toBe(404);

    // Remove Bob: the workspace is gone for him.
    expect((await app.call("DELETE", `${P}/workspaces/${slug}/members/${acc.body.member_id}`, { token: owner.token })).status).toBe(204);
    expect((await app.call("GET", `${P}/workspaces/${slug}`, { token: bob.token })).status).toBe(404);
    expect((await app.call("GET", `${P}/workspaces/${slug}/members`, { token: owner.token })).body.data).toHaveLength(1);
    const actions = (await auditLog(owner.token, slug)).map((e) => e.action);
    expect(actions).toEqual([
      "member.delete",
      "role.delete",
      "member.update",
      "workspace.update",
      "member.join",
      "member.invite.revoke",
      "member.invite",
      "member.invite",
      "role.update",
      "role.create",
      "workspace.create",
    ]);
  });

  test("MFA: enrol and confirm with real TOTP codes; verify, recover, regenerate, disable; the operator's reset", async () => {
    const u = await signup(app);
    const e = await app.call("POST", `${P}/me/mfa/totp`, { token: u.token, body: { name: "Phone" } });
    expect(e.status).toBe(201);
    expect(e.body).toMatchObject({ id: e.body.factor_id, type: "totp", name: "Phone", status: "pending" });
    expect(e.body.otpauth_uri).toStartWith("otpauth://totp/");
    // The otpauth library reads the URI the way an authenticator app scans the QR code.
    const parsed = OTPAuth.URI.parse(e.body.otpauth_uri) as OTPAuth.TOTP;
    expect(parsed.secret.base32).toBe(e.body.secret);

    const t0 = await totpTime(app);
    const c = await app.call("POST", `${P}/me/mfa/totp/${e.body.factor_id}/confirm`, { token: u.token, body: { code: totp(e.body.secret, t0 - 30_000) } });
    expect(c.status).toBe(200);
    expect(c.body.status).toBe("active");
    expect(c.body.recovery_codes).toHaveLength(10);
    const factors = await app.call("GET", `${P}/me/mfa`, { token: u.token });
    expect(factors.status).toBe(200);
    expect(factors.body).toMatchObject({ enabled: true, recovery_codes_left: 10, data: [{ id: e.body.factor_id, status: "active" }] });

    // Sign-in now answers the challenge; an authenticator code finishes it.
    const ch = await signin(u.username, u.password);
    expect(ch.status).toBe(200);
    expect(ch.body).toMatchObject({ mfa_required: true, factors: [{ id: e.body.factor_id, type: "totp" }] });
    expect(ch.body.access_token).toBeUndefined();
    const v = await app.call("POST", `${P}/auth/mfa/verify`, { body: { mfa_token: ch.body.mfa_token, code: totp(e.body.secret, t0) } });
    expect(v.status).toBe(200);
    expect((await introspect(v.body.access_token)).status).toBe(200);
    expect((await app.call("POST", `${P}/auth/mfa/verify`, { body: { mfa_token: ch.body.mfa_token, code: totp(e.body.secret, t0) } })).status).toBe(400); // single use

    // A recovery code finishes a challenge once.
    const ch2 = await signin(u.email, u.password);
    const rec = await app.call("POST", `${P}/auth/mfa/recover`, { body: { mfa_token: ch2.body.mfa_token, recovery_code: c.body.recovery_codes[0].toUpperCase() } });
    expect(rec.status).toBe(200);
    expect((await app.call("GET", `${P}/me/mfa`, { token: rec.body.access_token })).body.recovery_codes_left).toBe(9);

    // Regenerate: ten new codes, the old ones stop working.
    const regen = await app.call("POST", `${P}/me/mfa/recovery-codes/regenerate`, { token: rec.body.access_token });
    expect(regen.status).toBe(200);
    expect(regen.body.recovery_codes).toHaveLength(10);
    expect(regen.body.recovery_codes).not.toContain(c.body.recovery_codes[1]);
    const ch3 = await signin(u.username, u.password);
    const old = await app.call("POST", `${P}/auth/mfa/recover`, { body: { mfa_token: ch3.body.mfa_token, recovery_code: c.body.recovery_codes[1] } });
    expect(old.status).toBe(401);
    expect(old.body.error.code).toBe("INVALID_CODE");

    // Disabling the factor needs a second factor: a recovery code. Then sign-in asks for the password only.
    expect((await app.call("DELETE", `${P}/me/mfa/${e.body.factor_id}`, { token: rec.body.access_token, body: { code: regen.body.recovery_codes[0] } })).status).toBe(204);
    expect((await app.call("GET", `${P}/me/mfa`, { token: rec.body.access_token })).body).toMatchObject({ enabled: false, data: [{ id: e.body.factor_id, status: "disabled" }] });
    const plain = await signin(u.email, u.password);
    expect(plain.status).toBe(200);
    expect(plain.body.access_token).toBeString();

    // An account locked out of its authenticator: the operator resets its MFA.
    const w = await signup(app);
    const e2 = await app.call("POST", `${P}/me/mfa/totp`, { token: w.token, body: {} });
    const t1 = await totpTime(app);
    expect((await app.call("POST", `${P}/me/mfa/totp/${e2.body.factor_id}/confirm`, { token: w.token, body: { code: totp(e2.body.secret, t1) } })).status).toBe(200);
    expect((await signin(w.username, w.password)).body.mfa_required).toBe(true);
    expect((await app.call("DELETE", `${P}/admin/accounts/${await accountId(w.token)}/mfa`, { token: u.token })).status).toBe(403);
    expect((await app.call("DELETE", `${P}/admin/accounts/${await accountId(w.token)}/mfa`, { token: operator })).status).toBe(204);
    const after = await signin(w.username, w.password);
    expect(after.status).toBe(200);
    expect(after.body.access_token).toBeString();
    expect((await app.call("GET", `${P}/me/mfa`, { token: after.body.access_token })).body.enabled).toBe(false);
  }, 30_000);

  test("federated sign-in: providers, start, GET and POST callbacks, identities, unlink", async () => {
    const providers = await app.call("GET", `${P}/auth/providers`);
    expect(providers.status).toBe(200);
    expect(providers.body.data.map((p: any) => p.id)).toEqual(["idp_1", "idp_2"]);
    expect(providers.body.data[0].start_path).toBe(`${P}/auth/oauth/idp_1/start`);

    const who = { sub: `sub-${Date.now()}`, email: `fed-${Date.now()}@example.com`, email_verified: true, name: "Fed Person" };
    idp2.user = who;
    const s2 = await app.call("GET", `${P}/auth/oauth/idp_2/start?return_to=${encodeURIComponent(RETURN_TO)}`);
    expect(s2.status).toBe(302);
    const loc = new URL(s2.headers.get("location")!);
    expect(loc.origin + loc.pathname).toBe(`${idp2.issuer}/authorize`);
    expect(loc.searchParams.get("code_challenge_method")).toBe("S256");
    // idp_2 redirects the browser back with the code in the query: GET callback.
    const cb2 = await idp2.authorize(loc.href);
    expect(cb2.method).toBe("GET");
    const r2 = await sendCallback(cb2);
    expect(r2.status).toBe(200);
    expect(r2.body.return_to).toBe(RETURN_TO);
    expect(r2.headers.get("set-cookie")).toContain("auth_token=");
    const token = r2.body.tokens.access_token as string;
    expect((await introspect(token)).body.account).toMatchObject({ email: who.email, display_name: who.name });

    // idp_1 posts its callback as a form; the same verified email links to the same account.
    idp1.user = { sub: `apple-${Date.now()}`, email: who.email, email_verified: "true" };
    const s1 = await app.call("GET", `${P}/auth/oauth/idp_1/start?return_to=${encodeURIComponent(RETURN_TO)}`);
    expect(s1.status).toBe(302);
    expect(new URL(s1.headers.get("location")!).searchParams.get("response_mode")).toBe("form_post");
    const cb1 = await idp1.authorize(s1.headers.get("location")!);
    expect(cb1.method).toBe("POST");
    const r1 = await sendCallback(cb1);
    expect(r1.status).toBe(200);
    expect(await accountId(r1.body.tokens.access_token)).toBe(await accountId(token));

    const ids = await app.call("GET", `${P}/me/identities`, { token });
    expect(ids.status).toBe(200);
    expect(ids.body.data.map((i: any) => [i.provider, i.subject]).sort()).toEqual([["idp_1", idp1.user.sub], ["idp_2", who.sub]]);
    for (const i of ids.body.data) expect(i.created_at).toMatch(ISO);
    const idp1Identity = ids.body.data.find((i: any) => i.provider === "idp_1");
    expect((await app.call("DELETE", `${P}/me/identities/${idp1Identity.id}`, { token })).status).toBe(204);
    const left = await app.call("GET", `${P}/me/identities`, { token });
    expect(left.body.data.map((i: any) => i.provider)).toEqual(["idp_2"]);
    // The last way to sign in stays (this account has no password).
    expect((await app.call("DELETE", `${P}/me/identities/${left.body.data[0].id}`, { token })).status).toBe(409);
  });

  test("operator: accounts, status changes, database backup", async () => {
    const u = await signup(app);
    const id = await accountId(u.token);
    expect((await app.call("GET", `${P}/admin/accounts`, { token: u.token })).status).toBe(403);
    const seen: string[] = [];
    for (let cursor: string | null = null; ; ) {
      const page: any = await app.call("GET", `${P}/admin/accounts?limit=200${cursor ? `&cursor=${cursor}` : ""}`, { token: operator });
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((a: any) => a.id));
      if (!page.body.pagination.has_more) break;
      cursor = page.body.pagination.next_cursor;
    }
    expect(seen).toContain(id);
    expect(seen).toContain(await accountId(operator));

    const suspended = await app.call("POST", `${P}/admin/accounts/${id}/suspend`, { token: operator });
    expect(suspended.status).toBe(200);
    expect(suspended.body).toMatchObject({ id, status: "suspended" });
    expect((await introspect(u.token)).status).toBe(401); // sessions revoked
    const refused = await signin(u.username, u.password);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("ACCOUNT_SUSPENDED");
    const back = await app.call("POST", `${P}/admin/accounts/${id}/reactivate`, { token: operator });
    expect(back.status).toBe(200);
    expect(back.body.status).toBe("active");
    expect((await signin(u.username, u.password)).status).toBe(200);

    const r = await app.handle(new Request("http://localhost/platform/v1/admin/backup", { headers: { authorization: `Bearer ${operator}` } }));
    if (TEST_ENGINE === "postgres") {
      expect(r.status).toBe(409);
      expect(((await r.json()) as any).error.code).toBe("BACKUP_NOT_AVAILABLE_ON_POSTGRES");
      return;
    }
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/vnd.sqlite3");
    expect(r.headers.get("content-disposition")).toMatch(/^attachment; filename="bunker-\d{8}T\d{6}Z\.db"$/);
    const file = join(tmpdir(), `every-route-backup-${crypto.randomUUID()}.db`);
    writeFileSync(file, new Uint8Array(await r.arrayBuffer()));
    const db = new Database(file, { readonly: true });
    try {
      const emails = (db.query("SELECT email FROM platform_accounts").all() as { email: string }[]).map((a) => a.email);
      expect(emails).toContain("ops@example.com");
      expect(emails).toContain(u.email.toLowerCase());
    } finally {
      db.close();
      rmSync(file, { force: true });
    }
  });
});
