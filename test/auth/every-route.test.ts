/**
 * Every OpenAPI operation of the end-user Auth service (/auth/...), walked over HTTP the way a
 * customer product uses it, each answered with success at least once and checked by reading
 * the state back:
 * Apps (create, list, read, update, signing-key and publishable-key rotation, delete), the
 * JWKS and discovery document (tokens verified with jose's remote JWKS against the served
 * URL), sign-up/in, refresh, logout, /me, password change, verification codes (mailed and
 * returned, email and phone), password reset with the mailed code, MFA (TOTP codes from the
 * independent `otpauth` library, emailed codes, recovery codes, step-up, disable, the admin
 * reset), federated sign-in against two real OpenID providers on loopback (web flow with GET
 * and form-POST callbacks and the code exchange, idp_1's native flow, identities), tenants
 * and members, invites (mailed), permissions, roles, role assignment, /authorize, /verify,
 * introspection, M2M clients and the client_credentials grant, admin users and sessions, the
 * audit log, and the App's webhooks on the shared routes (endpoints, test, rotate, events,
 * replay) and the deprecated records (create, read, pause, test, deliveries, rotate, delete),
 * delivered to a real receiver and verified with the `standardwebhooks` package.
 *
 * Runs unchanged in-process (`npx bun test`, SQLite or PostgreSQL) and against the binary
 * (`npm run test:bin`). Background work (system mail, webhook deliveries) is the scheduler's:
 * the binary's process runs its own; in-process, the line marked "as bunker serve does"
 * starts the app's scheduler the same way. Results are waited for with a deadline, never a
 * sleep. Timestamps are checked for shape and order, not against a clock.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import * as OTPAuth from "otpauth";
import { ownerWithKey, startTestAppWithMail, type TestApp } from "../helpers/app";
import { claimsOf } from "../helpers/auth";
import { startReceiver, type ReceivedRequest, type Receiver } from "../helpers/http-receiver";
import { startOidcProvider, type CallbackRequest, type OidcProvider } from "../helpers/oidc-provider";
import type { SinkMessage, SmtpSink } from "../helpers/smtp-sink";
import { ON_BINARY } from "../helpers/target";
import { totp, totpTime } from "../helpers/totp";
import { until, verifyDelivery } from "../helpers/until";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RETURN_TO = "https://app.example.com/signed-in?from=idp";
const PASSWORD = "correct horse battery";

let app: TestApp;
let sink: SmtpSink;
let stopApp: () => Promise<void>;
let receiver: Receiver;
let idp1: OidcProvider;
let idp2: OidcProvider;
/** http://127.0.0.1:<port> of the listening app: what an independent verifier fetches the JWKS from. */
let base: string;
let stopListening: () => unknown = () => {};

/** The App every test uses (created in the first test) and its workspace key. */
interface App {
  id: string;
  slug: string;
  issuer: string;
  publishable_key: string;
  key: string;
  session: string;
  workspaceId: string;
  path(p: string): string;
}
let a: App;

beforeAll(async () => {
  idp1 = await startOidcProvider({ now: () => app.clock.nowMs(), sendUserJson: true });
  idp2 = await startOidcProvider({ now: () => app.clock.nowMs(), authMethods: ["client_secret_post"] });
  ({ app, sink, stop: stopApp } = await startTestAppWithMail({ ALLOW_PRIVATE_TARGETS: "true" }));
  // The process of `bunker serve` runs its scheduler; the in-process app starts it the same way.
  if (!ON_BINARY) app.ctx.scheduler.start();
  const server = app.listen(0, "127.0.0.1") as unknown as { port: number; stop?: (force?: boolean) => unknown };
  base = `http://127.0.0.1:${server.port}`;
  stopListening = () => server.stop?.(true);
  receiver = startReceiver();
});
afterAll(async () => {
  await stopListening();
  await stopApp?.();
  await receiver?.stop();
  idp1?.stop();
  idp2?.stop();
});

// --- helpers -----------------------------------------------------------------------------

let n = 0;
const uniq = (p: string) => `${p}${++n}x${Date.now().toString(36)}`;

/** An App-admin call with the App's workspace key (or another token). */
const adm = (method: string, path: string, body?: unknown, token = a.key) => app.call(method, a.path(path), { token, body });
const signin = (identifier: string, password = PASSWORD, extra: Record<string, unknown> = {}) =>
  app.call("POST", a.path("/auth/signin"), { body: { identifier, password, ...extra } });
const me = (token: string) => app.call("GET", a.path("/me"), { token });

async function signupUser(over: Partial<{ username: string; email: string; password: string; display_name: string }> = {}) {
  const u = { username: uniq("user"), email: `${uniq("user")}@example.com`, password: PASSWORD, ...over };
  const r = await app.call("POST", a.path("/auth/signup"), { token: a.publishable_key, body: u });
  expect(r.status).toBe(200);
  return { ...u, id: claimsOf(r.body.access_token).sub as string, access: r.body.access_token as string, refresh: r.body.refresh_token as string };
}

/** The newest mail to `to` whose subject contains `about`, the `count`th such (the scheduler sends it through the SMTP sink). */
async function mailTo(to: string, about: string, count = 1): Promise<SinkMessage> {
  const match = (m: SinkMessage) => m.to.includes(to.toLowerCase()) && m.subject.toLowerCase().includes(about);
  await sink.waitFor(() => sink.messages.filter(match).length >= count, 20_000);
  return sink.messages.filter(match).at(-1)!;
}
const codeIn = (m: SinkMessage) => /\b(\d{6})\b/.exec(m.text)![1];

/** An independent verifier: jose's remote JWKS over real HTTP, issuer pinned to the discovery document's. */
async function verifyJwt(token: string, issuer = a.issuer) {
  const jwks = createRemoteJWKSet(new URL(`${base}/auth/${a.slug}/v1/.well-known/jwks.json`), { cooldownDuration: 0 });
  return (await jwtVerify(token, jwks, { issuer, currentDate: app.clock.now() })).payload;
}

const sendCallback = (cb: CallbackRequest) =>
  cb.method === "GET" ? app.call("GET", cb.path) : app.call("POST", cb.path, { body: cb.form!.toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });

const verifyWebhook = (secret: string, req: ReceivedRequest) => verifyDelivery(app, secret, req);
const at = (path: string) => receiver.requests.filter((q) => q.path === path);

const waitUntil = (check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000) => until(what, check, timeoutMs);

// --- tests -------------------------------------------------------------------------------

describe("auth: every operation over HTTP", () => {
  test("Apps: create, list, read, update; discovery and JWKS verified with jose; signing-key and publishable-key rotation", async () => {
    const owner = await ownerWithKey(app);
    const slug = uniq("app");
    const c = await app.call("POST", "/auth/v1/apps", {
      token: owner.token,
      body: {
        slug,
        display_name: "Every Route",
        settings: {
          allowed_redirect_origins: ["https://app.example.com"],
          oauth_providers: {
            idp_1: { issuer: idp1.issuer, client_id: idp1.clientId, client_secret: idp1.clientSecret, native_client_ids: ["com.example.ios"] },
            idp_2: { issuer: idp2.issuer, client_id: idp2.clientId, client_secret: idp2.clientSecret },
          },
        },
      },
    });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({ slug, display_name: "Every Route", workspace_id: owner.ws.id });
    expect(c.body.id).toMatch(UUID);
    a = { id: c.body.id, slug, issuer: c.body.issuer, publishable_key: c.body.publishable_key, key: owner.token, session: owner.session, workspaceId: owner.ws.id, path: (p) => `/auth/${slug}/v1${p}` };

    const list = await app.call("GET", `/auth/v1/apps?workspace_id=${owner.ws.id}`, { token: a.key });
    expect(list.status).toBe(200);
    expect(list.body.data.map((x: any) => x.id)).toEqual([a.id]);
    const got = await app.call("GET", `/auth/v1/apps/${a.id}`, { token: a.key });
    expect(got.status).toBe(200);
    expect(got.body.settings.oauth_providers.idp_2).toEqual({ issuer: idp2.issuer, client_id: idp2.clientId, client_secret_hint: `...${idp2.clientSecret.slice(-4)}`, native_client_ids: [] });
    const patched = await app.call("PATCH", `/auth/v1/apps/${a.id}`, { token: a.key, body: { display_name: "Every Route App", settings: { password_min_length: 10 } } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ display_name: "Every Route App", settings: { password_min_length: 10 } });
    expect((await app.call("GET", `/auth/v1/apps/${a.id}`, { token: a.key })).body.display_name).toBe("Every Route App");

    // Discovery: the issuer verifiers pin, and where everything lives.
    const d = await app.call("GET", a.path("/.well-known/openid-configuration"));
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ issuer: a.issuer, jwks_uri: `${a.issuer}/v1/.well-known/jwks.json`, token_endpoint: `${a.issuer}/v1/oauth/token`, grant_types_supported: ["client_credentials"] });
    expect(a.issuer).toBe(`http://localhost:8080/auth/${slug}`);
    const jwks = await app.call("GET", a.path("/.well-known/jwks.json"));
    expect(jwks.status).toBe(200);
    expect(jwks.body.keys).toHaveLength(1);
    expect(jwks.body.keys[0]).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig" });

    // A sign-up token verifies offline against the served key set.
    const u = await signupUser();
    const claims = await verifyJwt(u.access, d.body.issuer);
    expect(claims).toMatchObject({ sub: u.id, type: "end_user" });
    expect(decodeProtectedHeader(u.access).kid).toBe(jwks.body.keys[0].kid);

    // Signing-key rotation: the new key signs, the old one stays published.
    const rot = await app.call("POST", `/auth/v1/apps/${a.id}/signing-keys/rotate`, { token: a.key });
    expect(rot.status).toBe(200);
    expect(rot.body.kid).not.toBe(jwks.body.keys[0].kid);
    expect(rot.body.jwks.keys.map((k: any) => k.kid).sort()).toEqual([jwks.body.keys[0].kid, rot.body.kid].sort());
    const u2 = await signupUser();
    expect(decodeProtectedHeader(u2.access).kid).toBe(rot.body.kid);
    expect((await verifyJwt(u2.access)).sub).toBe(u2.id);
    expect((await verifyJwt(u.access)).sub).toBe(u.id);

    // Publishable-key rotation: the old key stops working at once.
    const oldPk = a.publishable_key;
    const pk = await app.call("POST", `/auth/v1/apps/${a.id}/publishable-key/rotate`, { token: a.key });
    expect(pk.status).toBe(200);
    expect(pk.body.publishable_key).not.toBe(oldPk);
    a.publishable_key = pk.body.publishable_key;
    expect((await app.call("POST", a.path("/auth/signup"), { token: oldPk, body: { username: uniq("late"), email: `${uniq("late")}@example.com`, password: PASSWORD } })).status).toBe(401);
    await signupUser();
  });

  test("sign-up, sign-in, refresh, logout, /me, password change; verification codes (mailed and returned); password reset", async () => {
    const u = await signupUser({ display_name: "Vera" });
    // The sign-up mail carries a code; until it is used, the email is not a sign-in identifier.
    const welcome = await mailTo(u.email, "verif");
    expect((await signin(u.email)).status).toBe(401);
    const v = await app.call("POST", a.path("/auth/verify-email"), { body: { email: u.email, code: codeIn(welcome) } });
    expect(v.status).toBe(200);
    expect(v.body).toEqual({ verified: true });
    const s = await signin(u.email);
    expect(s.status).toBe(200);
    expect(claimsOf(s.body.access_token).amr).toEqual(["pwd"]);

    const m = await me(s.body.access_token);
    expect(m.status).toBe(200);
    expect(m.body).toMatchObject({ id: u.id, username: u.username, email: u.email, email_verified: true, display_name: "Vera" });
    const pm = await app.call("PATCH", a.path("/me"), { token: s.body.access_token, body: { display_name: "Vera V." } });
    expect(pm.status).toBe(200);
    expect(pm.body.display_name).toBe("Vera V.");
    expect((await me(s.body.access_token)).body.display_name).toBe("Vera V.");

    // Refresh rotates; logout ends the session.
    const r = await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: s.body.refresh_token } });
    expect(r.status).toBe(200);
    expect(r.body.refresh_token).not.toBe(s.body.refresh_token);
    expect((await app.call("POST", a.path("/auth/logout"), { body: { refresh_token: r.body.refresh_token } })).status).toBe(204);
    expect((await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: r.body.refresh_token } })).status).toBe(400);

    // Password change.
    const pw = await app.call("POST", a.path("/me/password"), { token: u.access, body: { current_password: PASSWORD, new_password: "a better passphrase" } });
    expect(pw.status).toBe(204);
    expect((await signin(u.username, "a better passphrase")).status).toBe(200);

    // Codes minted by the customer's backend: returned (email and phone), or mailed.
    const w = await signupUser();
    const code = await adm("POST", "/auth/request-verification", { email: w.email });
    expect(code.status).toBe(201);
    expect(code.body).toMatchObject({ channel: "email", user_id: w.id });
    expect(code.body.code).toMatch(/^\d{6}$/);
    expect(code.body.expires_at).toMatch(ISO);
    expect((await app.call("POST", a.path("/auth/verify-email"), { body: { email: w.email, code: code.body.code } })).status).toBe(200);
    const phone = await adm("POST", "/auth/request-verification", { phone: "+14155550123", user_id: w.id });
    expect(phone.status).toBe(201);
    expect(phone.body).toMatchObject({ channel: "phone", user_id: w.id, target_masked: "+*******0123" });
    const vp = await app.call("POST", a.path("/auth/verify-phone"), { body: { phone: "+14155550123", code: phone.body.code } });
    expect(vp.status).toBe(200);
    expect(vp.body.verified).toBe(true);

    const x = await signupUser();
    await mailTo(x.email, "verif"); // the sign-up mail
    const sent = await adm("POST", "/auth/send-verification-email", { user_id: x.id });
    expect(sent.status).toBe(202);
    expect(sent.body.code).toBeUndefined();
    const second = await mailTo(x.email, "verif", 2);
    expect((await app.call("POST", a.path("/auth/verify-email"), { body: { email: x.email, code: codeIn(second) } })).status).toBe(200);
    expect((await adm("GET", `/admin/users/${x.id}`)).body.email_verified).toBe(true);

    // Password reset: the same answer for an unknown address; the code arrives by mail.
    const known = await app.call("POST", a.path("/auth/password/request-reset"), { body: { email: x.email } });
    const unknown = await app.call("POST", a.path("/auth/password/request-reset"), { body: { email: `${uniq("nobody")}@example.com` } });
    expect(known.status).toBe(204);
    expect(unknown.status).toBe(204);
    const reset = await mailTo(x.email, "reset");
    const done = await app.call("POST", a.path("/auth/password/reset"), { body: { email: x.email, code: codeIn(reset), new_password: "reset passphrase 9" } });
    expect(done.status).toBe(204);
    expect((await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: x.refresh } })).status).toBe(400); // sessions revoked
    expect((await signin(x.email, PASSWORD)).status).toBe(401);
    expect((await signin(x.email, "reset passphrase 9")).status).toBe(200);
  }, 60_000);

  test("MFA: TOTP and emailed codes, recovery codes, step-up, disable, the admin reset", async () => {
    const u = await signupUser();
    const e = await app.call("POST", a.path("/me/mfa/factors"), { token: u.access, body: { type: "totp", name: "Phone" } });
    expect(e.status).toBe(201);
    expect(e.body).toMatchObject({ type: "totp", name: "Phone", status: "pending" });
    const parsed = OTPAuth.URI.parse(e.body.otpauth_uri) as OTPAuth.TOTP;
    expect(parsed.secret.base32).toBe(e.body.secret);

    const t0 = await totpTime(app);
    const c = await app.call("POST", a.path(`/me/mfa/factors/${e.body.id}/confirm`), { token: u.access, body: { code: totp(e.body.secret, t0 - 30_000) } });
    expect(c.status).toBe(200);
    expect(c.body.status).toBe("active");
    expect(c.body.recovery_codes).toHaveLength(10);
    const factors = await app.call("GET", a.path("/me/mfa/factors"), { token: u.access });
    expect(factors.status).toBe(200);
    expect(factors.body.data).toEqual([expect.objectContaining({ id: e.body.id, type: "totp", status: "active" })]);

    // Sign-in answers the challenge; an authenticator code finishes it.
    const ch = await signin(u.username);
    expect(ch.status).toBe(200);
    expect(ch.body.mfa_required).toBe(true);
    expect(ch.body.mfa_token).toMatch(UUID);
    expect(ch.body.access_token).toBeUndefined();
    const v = await app.call("POST", a.path("/auth/mfa/verify"), { body: { mfa_token: ch.body.mfa_token, code: totp(e.body.secret, t0) } });
    expect(v.status).toBe(200);
    expect((await verifyJwt(v.body.access_token)).amr).toEqual(["pwd", "totp"]);

    // Step-up of the sign-up session (amr [pwd]) with a recovery code, then refresh reflects it.
    const up = await app.call("POST", a.path("/me/mfa/step-up"), { token: u.access, body: { code: c.body.recovery_codes[0] } });
    expect(up.status).toBe(200);
    expect(up.body.amr).toEqual(["pwd", "recovery_code"]);
    expect(up.body.mfa_at).toMatch(ISO);
    const refreshed = await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: u.refresh } });
    expect(claimsOf(refreshed.body.access_token).amr).toEqual(["pwd", "recovery_code"]);

    // Regenerate: the old codes stop working, a new one finishes a challenge.
    const regen = await app.call("POST", a.path("/me/mfa/recovery-codes/regenerate"), { token: u.access });
    expect(regen.status).toBe(200);
    expect(regen.body.recovery_codes).toHaveLength(10);
    const ch2 = await signin(u.username);
    expect((await app.call("POST", a.path("/auth/mfa/recover"), { body: { mfa_token: ch2.body.mfa_token, recovery_code: c.body.recovery_codes[1] } })).status).toBe(401);
    const rec = await app.call("POST", a.path("/auth/mfa/recover"), { body: { mfa_token: ch2.body.mfa_token, recovery_code: regen.body.recovery_codes[0].toUpperCase() } });
    expect(rec.status).toBe(200);
    expect(claimsOf(rec.body.access_token).amr).toEqual(["pwd", "recovery_code"]);

    // An email factor: confirmed with a mailed code; at sign-in, send-code mails one.
    const ef = await app.call("POST", a.path("/me/mfa/factors"), { token: u.access, body: { type: "email" } });
    expect(ef.status).toBe(201);
    expect(ef.body).toMatchObject({ type: "email", status: "pending", email: u.email });
    const confirmMail = await mailTo(u.email, "confirm");
    expect((await app.call("POST", a.path(`/me/mfa/factors/${ef.body.id}/confirm`), { token: u.access, body: { code: codeIn(confirmMail) } })).status).toBe(200);
    const ch3 = await signin(u.username);
    expect(ch3.body.factors.map((f: any) => f.type)).toEqual(["totp", "email"]);
    const sc = await app.call("POST", a.path("/auth/mfa/send-code"), { body: { mfa_token: ch3.body.mfa_token, factor_id: ef.body.id } });
    expect(sc.status).toBe(200);
    expect(sc.body.email_masked).toContain("@example.com");
    expect(sc.body.code_expires_at).toMatch(ISO);
    const signInMail = await mailTo(u.email, "sign-in code");
    const ev = await app.call("POST", a.path("/auth/mfa/verify"), { body: { mfa_token: ch3.body.mfa_token, code: codeIn(signInMail) } });
    expect(ev.status).toBe(200);
    expect(claimsOf(ev.body.access_token).amr).toEqual(["pwd", "email"]);

    // Disable the TOTP factor (soft): listed as disabled; the email factor still gates sign-in.
    expect((await app.call("DELETE", a.path(`/me/mfa/factors/${e.body.id}`), { token: u.access })).status).toBe(204);
    const after = await app.call("GET", a.path("/me/mfa/factors"), { token: u.access });
    expect(after.body.data.find((f: any) => f.id === e.body.id).status).toBe("disabled");

    // The App admin resets MFA: the next sign-in needs the password only.
    expect((await adm("DELETE", `/admin/users/${u.id}/mfa`)).status).toBe(204);
    const plain = await signin(u.username);
    expect(plain.status).toBe(200);
    expect(plain.body.access_token).toBeString();
  }, 60_000);

  test("federated sign-in: web flow (GET and form-POST callbacks, exchange), native flow, identities", async () => {
    const who = { sub: uniq("sub"), email: `${uniq("fed")}@example.com`, email_verified: true, name: "Fed Person" };
    idp2.user = who;
    const az = await app.call("GET", a.path(`/auth/oauth/idp_2/authorize?return_to=${encodeURIComponent(RETURN_TO)}`));
    expect(az.status).toBe(302);
    const loc = new URL(az.headers.get("location")!);
    expect(loc.origin + loc.pathname).toBe(`${idp2.issuer}/authorize`);
    const cb2 = await idp2.authorize(loc.href);
    expect(cb2.method).toBe("GET");
    const back2 = await sendCallback(cb2);
    expect(back2.status).toBe(303);
    const to2 = new URL(back2.headers.get("location")!);
    expect(to2.origin + to2.pathname).toBe("https://app.example.com/signed-in");
    const code2 = to2.searchParams.get("auth_code")!;
    const t2 = await app.call("POST", a.path("/auth/oauth/exchange"), { body: { code: code2 } });
    expect(t2.status).toBe(200);
    const claims = await verifyJwt(t2.body.access_token);
    expect(claims.amr).toEqual(["oauth", "idp_2"]);
    expect((await me(t2.body.access_token)).body).toMatchObject({ email: who.email, email_verified: true, display_name: who.name });
    expect((await app.call("POST", a.path("/auth/oauth/exchange"), { body: { code: code2 } })).status).toBe(400); // single use

    // idp_1 posts its callback as a form; the same verified email links to the same user.
    const appleSub = uniq("apple");
    idp1.user = { sub: appleSub, email: who.email, email_verified: "true" };
    const az1 = await app.call("GET", a.path(`/auth/oauth/idp_1/authorize?return_to=${encodeURIComponent(RETURN_TO)}`));
    expect(az1.status).toBe(302);
    const cb1 = await idp1.authorize(az1.headers.get("location")!);
    expect(cb1.method).toBe("POST");
    const back1 = await sendCallback(cb1);
    expect(back1.status).toBe(303);
    const t1 = await app.call("POST", a.path("/auth/oauth/exchange"), { body: { code: new URL(back1.headers.get("location")!).searchParams.get("auth_code") } });
    expect(t1.status).toBe(200);
    expect(claimsOf(t1.body.access_token)).toMatchObject({ sub: claims.sub, amr: ["oauth", "idp_1"] });

    // idp_1's native flow: the app sends the provider's ID token with its raw nonce.
    const raw = randomBytes(32).toString("base64url");
    const idToken = await idp1.signIdToken({ sub: appleSub, email: who.email, email_verified: true, nonce: createHash("sha256").update(raw).digest("hex") });
    const nat = await app.call("POST", a.path("/auth/oauth/idp_1"), { body: { id_token: idToken, nonce: raw } });
    expect(nat.status).toBe(200);
    expect(claimsOf(nat.body.access_token)).toMatchObject({ sub: claims.sub, amr: ["oauth", "idp_1"] });
    expect((await app.call("POST", a.path("/auth/oauth/idp_1"), { body: { id_token: idToken, nonce: raw } })).status).toBe(401); // nonce replayed

    const ids = await app.call("GET", a.path("/me/identities"), { token: t2.body.access_token });
    expect(ids.status).toBe(200);
    expect(ids.body.data.map((i: any) => [i.provider, i.subject]).sort()).toEqual([["idp_1", appleSub], ["idp_2", who.sub]]);
    const apple = ids.body.data.find((i: any) => i.provider === "idp_1");
    expect((await app.call("DELETE", a.path(`/me/identities/${apple.id}`), { token: t2.body.access_token })).status).toBe(204);
    const left = await app.call("GET", a.path("/me/identities"), { token: t2.body.access_token });
    expect(left.body.data.map((i: any) => i.provider)).toEqual(["idp_2"]);
    // The last way to sign in stays (no password).
    expect((await app.call("DELETE", a.path(`/me/identities/${left.body.data[0].id}`), { token: t2.body.access_token })).status).toBe(409);
  });

  test("permissions, roles, role assignment; /authorize, /verify, introspection", async () => {
    for (const name of ["doc.read", "doc.write", "doc.delete"]) expect((await adm("POST", "/permissions", { name, description: `may ${name}` })).status).toBe(201);
    const perms = await adm("GET", "/permissions");
    expect(perms.status).toBe(200);
    expect(perms.body.data.map((p: any) => p.name)).toEqual(["doc.delete", "doc.read", "doc.write"]);
    expect((await adm("DELETE", "/permissions/doc.delete")).status).toBe(204);
    expect((await adm("GET", "/permissions")).body.data.map((p: any) => p.name)).toEqual(["doc.read", "doc.write"]);

    const role = await adm("POST", "/roles", { name: "reader", permissions: ["doc.read"], description: "Reads" });
    expect(role.status).toBe(201);
    expect(role.body).toMatchObject({ app_id: a.id, name: "reader", permissions: ["doc.read"] });
    const roles = await adm("GET", "/roles");
    expect(roles.status).toBe(200);
    expect(roles.body.data.map((r: any) => r.name)).toContain("reader");
    const one = await adm("GET", `/roles/${role.body.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: role.body.id, name: "reader" });
    const editor = await adm("PATCH", `/roles/${role.body.id}`, { name: "editor", permissions: ["doc.read", "doc.write"] });
    expect(editor.status).toBe(200);
    expect(editor.body).toMatchObject({ name: "editor", permissions: ["doc.read", "doc.write"] });
    const temp = await adm("POST", "/roles", { name: "temp", permissions: [] });
    expect((await adm("DELETE", `/roles/${temp.body.id}`)).status).toBe(204);
    expect((await adm("GET", `/roles/${temp.body.id}`)).status).toBe(404);

    const u = await signupUser();
    const put = await adm("PUT", `/users/${u.id}/role`, { role: "editor" });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ user_id: u.id, role: "editor" });
    const token = (await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: u.refresh } })).body.access_token as string;
    expect(await verifyJwt(token)).toMatchObject({ role: "editor", permissions: ["doc.read", "doc.write"] });

    expect((await app.call("POST", a.path("/authorize"), { body: { token, permission: "doc.write" } })).body).toEqual({ allowed: true, role: "editor" });
    expect((await app.call("POST", a.path("/authorize"), { body: { token, permission: "doc.delete" } })).body).toEqual({ allowed: false, role: "editor" });
    const ver = await app.call("POST", a.path("/verify"), { body: { token } });
    expect(ver.status).toBe(200);
    expect(ver.body).toMatchObject({ valid: true, claims: { sub: u.id, role: "editor", iss: a.issuer } });
    const intro = await app.call("POST", a.path("/oauth/introspect"), { body: new URLSearchParams({ token }).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(intro.status).toBe(200);
    expect(intro.body).toMatchObject({ active: true, sub: u.id, scope: "doc.read doc.write", role: "editor", type: "end_user", iss: a.issuer });
    expect((await app.call("POST", a.path("/oauth/introspect"), { body: { token: "garbage" } })).body).toEqual({ active: false });
  });

  test("tenants and members; sign-in to a tenant; invites (mailed) and accepting", async () => {
    const t = await adm("POST", "/tenants", { display_name: "Acme Inc", metadata: { plan: "pro" } });
    expect(t.status).toBe(201);
    expect(t.body).toMatchObject({ app_id: a.id, slug: "acme-inc", display_name: "Acme Inc", status: "active", metadata: { plan: "pro" } });
    expect(t.body.display_id).toMatch(/^tnt_[0-9a-f]{12}$/);
    const list = await adm("GET", "/tenants?status=active");
    expect(list.status).toBe(200);
    expect(list.body.data.map((x: any) => x.id)).toContain(t.body.id);
    expect((await adm("GET", `/tenants/${t.body.display_id}`)).body.id).toBe(t.body.id);
    const p = await adm("PATCH", `/tenants/${t.body.id}`, { display_name: "Acme Corp", metadata: { plan: "enterprise" } });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ display_name: "Acme Corp", metadata: { plan: "enterprise" } });

    const u = await signupUser();
    const add = await adm("POST", `/tenants/${t.body.id}/members`, { accountId: u.id });
    expect(add.status).toBe(201);
    expect(add.body).toMatchObject({ tenant_id: t.body.id, account_id: u.id, role_id: null, role_name: null });
    expect(add.body.joined_at).toMatch(ISO);
    const members = await adm("GET", `/tenants/${t.body.id}/members`);
    expect(members.status).toBe(200);
    expect(members.body.data.map((m: any) => m.account_id)).toEqual([u.id]);
    await adm("POST", "/roles", { name: "tenant-admin", permissions: [] });
    const pm = await adm("PATCH", `/tenants/${t.body.id}/members/${u.id}`, { role: "tenant-admin" });
    expect(pm.status).toBe(200);
    expect(pm.body.role_name).toBe("tenant-admin");
    const ts = await signin(u.username, PASSWORD, { tenant_id: t.body.id });
    expect(ts.status).toBe(200);
    expect(claimsOf(ts.body.access_token)).toMatchObject({ tid: t.body.id, trole: "tenant-admin" });
    expect((await adm("DELETE", `/tenants/${t.body.id}/members/${u.id}`)).status).toBe(204);
    expect((await adm("GET", `/tenants/${t.body.id}/members`)).body.data).toEqual([]);
    expect((await signin(u.username, PASSWORD, { tenant_id: t.body.id })).status).toBe(403);
    expect((await adm("DELETE", `/tenants/${t.body.id}`)).status).toBe(204);
    expect((await adm("GET", `/tenants/${t.body.id}`)).status).toBe(404);

    // Invites: one mailed and accepted, one revoked.
    const email = `${uniq("ada")}@example.com`;
    const inv = await adm("POST", "/invites", { email, send_email: true, accept_url: "https://app.example.com/join" });
    expect(inv.status).toBe(201);
    expect(inv.body.code).toMatch(/^inv_/);
    expect(inv.body).toMatchObject({ email, max_uses: 1, uses: 0, status: "active" });
    const mail = await mailTo(email, "invited");
    expect(mail.text).toContain(`https://app.example.com/join?invite_code=${inv.body.code}`);
    const acc = await app.call("POST", a.path("/auth/accept-invite"), { body: { code: /invite_code=(inv_[A-Za-z0-9]+)/.exec(mail.text)![1], password: PASSWORD, display_name: "Ada" } });
    expect(acc.status).toBe(200);
    expect((await me(acc.body.access_token)).body).toMatchObject({ email, email_verified: true, display_name: "Ada" });
    const other = await adm("POST", "/invites", {});
    expect((await adm("DELETE", `/invites/${other.body.id}`)).status).toBe(204);
    const invites = await adm("GET", "/invites");
    expect(invites.status).toBe(200);
    const byId = Object.fromEntries(invites.body.data.map((i: any) => [i.id, i.status]));
    expect(byId).toMatchObject({ [inv.body.id]: "exhausted", [other.body.id]: "revoked" });
    expect((await app.call("POST", a.path("/auth/accept-invite"), { body: { code: other.body.code, password: PASSWORD, email: `${uniq("late")}@example.com` } })).status).toBe(410);
  }, 60_000);

  test("M2M clients and client_credentials; admin users and sessions; the audit log", async () => {
    const cl = await app.call("POST", `/auth/v1/apps/${a.id}/m2m-clients`, { token: a.key, body: { name: "backend", permissions: ["auth.user.read"] } });
    expect(cl.status).toBe(201);
    expect(cl.body.client_id).toMatch(/^m2m_/);
    const clients = await app.call("GET", `/auth/v1/apps/${a.id}/m2m-clients`, { token: a.key });
    expect(clients.status).toBe(200);
    expect(clients.body.data.map((x: any) => x.client_id)).toEqual([cl.body.client_id]);
    expect(JSON.stringify(clients.body)).not.toContain(cl.body.client_secret);
    expect((await app.call("GET", `/auth/v1/apps/${a.id}/m2m-clients/${cl.body.id}`, { token: a.key })).body.name).toBe("backend");
    const upd = await app.call("PATCH", `/auth/v1/apps/${a.id}/m2m-clients/${cl.body.id}`, { token: a.key, body: { permissions: ["auth.user.*"] } });
    expect(upd.status).toBe(200);
    expect(upd.body.permissions).toEqual(["auth.user.*"]);
    const rot = await app.call("POST", `/auth/v1/apps/${a.id}/m2m-clients/${cl.body.id}/rotate-secret`, { token: a.key });
    expect(rot.status).toBe(200);
    expect(rot.body.client_secret).not.toBe(cl.body.client_secret);
    const grant = (secret: string) => app.call("POST", a.path("/oauth/token"), { body: { grant_type: "client_credentials", client_id: cl.body.client_id, client_secret: secret } });
    expect((await grant(cl.body.client_secret)).status).toBe(401);
    const tok = await grant(rot.body.client_secret);
    expect(tok.status).toBe(200);
    expect(tok.body.token_type).toBe("Bearer");
    expect(await verifyJwt(tok.body.access_token)).toMatchObject({ type: "m2m", permissions: ["auth.user.*"] });
    const m2m = tok.body.access_token as string;

    // Admin users through the M2M token.
    const made = await adm("POST", "/admin/users", { email: `${uniq("made")}@example.com`, password: PASSWORD, display_name: "Made", email_verified: true }, m2m);
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ app_id: a.id, display_name: "Made", email_verified: true, status: "active" });
    const users = await adm("GET", `/admin/users?q=${encodeURIComponent(made.body.email)}`, undefined, m2m);
    expect(users.status).toBe(200);
    expect(users.body.data.map((x: any) => x.id)).toEqual([made.body.id]);
    expect((await adm("GET", `/admin/users/${made.body.id}`, undefined, m2m)).body.username).toBe(made.body.username);
    const p = await adm("PATCH", `/admin/users/${made.body.id}`, { display_name: "Made Again", metadata: { tier: 2 } }, m2m);
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ display_name: "Made Again", metadata: { tier: 2 } });

    // Sessions: two sign-ins, one revoked by the admin.
    const s1 = await signin(made.body.email);
    const s2 = await signin(made.body.username);
    expect([s1.status, s2.status]).toEqual([200, 200]);
    const sessions = await adm("GET", `/admin/users/${made.body.id}/sessions`);
    expect(sessions.status).toBe(200);
    expect(sessions.body.data.map((x: any) => x.id).sort()).toEqual([claimsOf(s1.body.access_token).sid, claimsOf(s2.body.access_token).sid].sort());
    expect((await adm("DELETE", `/admin/users/${made.body.id}/sessions/${claimsOf(s2.body.access_token).sid}`)).status).toBe(204);
    expect((await me(s2.body.access_token)).status).toBe(401);
    expect((await me(s1.body.access_token)).status).toBe(200);

    expect((await adm("DELETE", `/admin/users/${made.body.id}`, undefined, m2m)).status).toBe(204);
    expect((await adm("GET", `/admin/users/${made.body.id}`)).status).toBe(404);
    expect((await app.call("DELETE", `/auth/v1/apps/${a.id}/m2m-clients/${cl.body.id}`, { token: a.key })).status).toBe(204);
    expect((await grant(rot.body.client_secret)).status).toBe(401);

    // The audit log of the App, newest first by its time-ordered id (token exchanges are written
    // behind the answer with the time of the exchange, so created_at may trail by a little).
    const log = await adm("GET", "/audit-log?limit=200");
    expect(log.status).toBe(200);
    const actions = log.body.data.map((e: any) => e.action);
    expect(actions).toEqual(expect.arrayContaining(["user.signin", "user.session.revoke", "m2m.create", "m2m.update", "m2m.delete", "m2m.token", "user.create", "user.update", "user.delete"]));
    for (const e of log.body.data) expect(e.created_at).toMatch(ISO);
    for (let i = 1; i < log.body.data.length; i++) expect(log.body.data[i - 1].id > log.body.data[i].id).toBe(true);
    const deleted = await adm("GET", `/audit-log?action=user.delete&target_id=${made.body.id}`);
    expect(deleted.body.data).toEqual([expect.objectContaining({ action: "user.delete", outcome: "success" })]);
  });

  test("webhooks: shared endpoints (test, rotate, events, replay) and the deprecated records, delivered to a real receiver", async () => {
    const hooks = `/auth/v1/apps/${a.id}/webhooks`;
    const call = (method: string, path: string, body?: unknown) => app.call(method, `${hooks}${path}`, { token: a.key, body });
    const types = await call("GET", "/event-types");
    expect(types.status).toBe(200);
    expect(types.body.data.map((t: any) => t.type)).toEqual(expect.arrayContaining(["user.created", "user.signed_in", "tenant.created"]));

    const ep = await call("POST", "/endpoints", { url: `${receiver.url}/shared`, description: "all user events", event_types: ["user.created", "user.signed_in"] });
    expect(ep.status).toBe(201);
    const secret = ep.body.signing_secret as string;
    expect(secret).toMatch(/^whsec_/);
    const { signing_secret: _s, ...view } = ep.body;
    expect((await call("GET", `/endpoints/${ep.body.id}`)).body).toEqual(view);
    expect((await call("GET", "/endpoints")).body.data).toEqual([view]);
    const patched = await call("PATCH", `/endpoints/${ep.body.id}`, { description: "user events" });
    expect(patched.status).toBe(200);
    expect(patched.body.description).toBe("user events");

    // A real sign-up reaches it through the scheduler, signed.
    const u = await signupUser();
    const isCreated = (q: ReceivedRequest) => JSON.parse(q.body).type === "user.created" && JSON.parse(q.body).data?.id === u.id;
    await waitUntil(() => at("/shared").some(isCreated), "user.created delivered");
    const delivered = at("/shared").find(isCreated)!;
    expect(verifyWebhook(secret, delivered)).toMatchObject({ type: "user.created", data: { id: u.id, app_id: a.id, username: u.username } });

    // Test (sent now), rotate-secret, the events log, one event, a replay of its bytes.
    const sent = await call("POST", `/endpoints/${ep.body.id}/test`, { event_type: "user.created" });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ succeeded: true, status_code: 200, trigger: "test" });
    const rotated = await call("POST", `/endpoints/${ep.body.id}/rotate-secret`, { grace_hours: 0 });
    expect(rotated.status).toBe(200);
    const secret2 = rotated.body.signing_secret as string;
    expect(secret2).not.toBe(secret);
    const eventId = delivered.headers["webhook-id"];
    let detail: any;
    await waitUntil(async () => {
      detail = (await call("GET", `/events/${eventId}`)).body;
      return detail.deliveries?.[0]?.status === "delivered";
    }, "the delivery recorded");
    expect(detail).toMatchObject({ id: eventId, type: "user.created", payload: JSON.parse(delivered.body) });
    const log = await call("GET", "/events?type=user.created");
    expect(log.status).toBe(200);
    expect(log.body.data.map((e: any) => e.id)).toContain(eventId);
    const replay = await app.call("POST", `${hooks}/events/${eventId}/replay?endpoint_id=${ep.body.id}`, { token: a.key });
    expect(replay.status).toBe(200);
    expect(replay.body.data).toEqual([expect.objectContaining({ endpoint_id: ep.body.id, succeeded: true, trigger: "replay" })]);
    const both = at("/shared").filter((q) => q.headers["webhook-id"] === eventId);
    expect(both.map((q) => q.body)).toEqual([delivered.body, delivered.body]);
    expect(verifyWebhook(secret2, both[1]).id).toBe(eventId);
    expect(() => verifyWebhook(secret, both[1])).toThrow();
    expect((await call("DELETE", `/endpoints/${ep.body.id}`)).status).toBe(204);
    expect((await call("GET", `/endpoints/${ep.body.id}`)).status).toBe(404);

    // The deprecated records: create, read, list, pause and resume, test, deliveries, rotate, delete.
    const rec = await call("POST", "", { url: `${receiver.url}/legacy` });
    expect(rec.status).toBe(201);
    expect(rec.headers.get("deprecation")).toBe("true");
    expect(rec.body.id).toMatch(/^whk_/);
    // (workspace_id is not checked: on this App scope the engine fills it with the App's id, reported separately.)
    expect(rec.body).toMatchObject({ url: `${receiver.url}/legacy`, active: true, failure_count: 0 });
    const { signing_secret: legacySecret, ...recView } = rec.body;
    expect(typeof legacySecret).toBe("string");
    expect((await call("GET", `/${rec.body.id}`)).body).toEqual(recView);
    expect((await call("GET", "")).body.data).toEqual([recView]);
    expect((await call("PATCH", `/${rec.body.id}`, { active: false })).body.active).toBe(false);
    const resumed = await call("PATCH", `/${rec.body.id}`, { active: true });
    expect(resumed.status).toBe(200);
    expect(resumed.body.active).toBe(true);
    const ping = await call("POST", `/${rec.body.id}/test`, {});
    expect(ping.status).toBe(202);
    expect(ping.body.accepted).toBe(true);
    await waitUntil(() => at("/legacy").some((q) => q.headers["webhook-id"] === ping.body.event_id), "the legacy test delivered");
    let attempts: any[] = [];
    await waitUntil(async () => {
      attempts = (await call("GET", `/${rec.body.id}/deliveries`)).body.data;
      return attempts.some((x) => x.event_id === ping.body.event_id);
    }, "the test attempt recorded");
    expect(attempts.find((x) => x.event_id === ping.body.event_id)).toMatchObject({ trigger: "test", status_code: 200, error_class: null });
    const rr = await call("POST", `/${rec.body.id}/rotate-secret`);
    expect(rr.status).toBe(201);
    expect(rr.body.signing_secret).not.toBe(legacySecret);
    expect((await call("DELETE", `/${rec.body.id}`)).status).toBe(204);
    expect((await call("GET", `/${rec.body.id}`)).status).toBe(404);
  }, 60_000);

  test("deleting an App takes its routes with it", async () => {
    const doomed = await app.call("POST", "/auth/v1/apps", { token: a.key, body: { slug: uniq("doomed"), display_name: "Doomed" } });
    expect(doomed.status).toBe(201);
    expect((await app.call("GET", `/auth/${doomed.body.slug}/v1/.well-known/jwks.json`)).status).toBe(200);
    expect((await app.call("DELETE", `/auth/v1/apps/${doomed.body.id}`, { token: a.key })).status).toBe(204);
    expect((await app.call("GET", `/auth/v1/apps/${doomed.body.id}`, { token: a.key })).status).toBe(404);
    expect((await app.call("GET", `/auth/${doomed.body.slug}/v1/.well-known/jwks.json`)).status).toBe(404);
  });
});
