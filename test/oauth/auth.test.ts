// source-only: every test starts with a fresh OAuth authorize budget (30 a minute per App and address) by moving the injected clock (beforeEach), and many move it through exchange-code and state expiry or read the audit table (app.ctx.db); the App OAuth routes run on the binary in auth/every-route
/**
 * App end-user federated sign-in against real OpenID providers on loopback: web flow
 * (authorize -> provider -> callback 303 -> exchange), idp_1's native flow, linking rules,
 * MFA after a federated first factor, /me/identities. Tokens are checked with jose against
 * the App's served JWKS.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createLocalJWKSet, jwtVerify } from "jose";
import * as OTPAuth from "otpauth";
import { createHash, randomBytes } from "node:crypto";
import { MINUTE, SECOND } from "../../src/core/clock";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { claimsOf, createAuthApp, signupEndUser, type TestAuthApp } from "../helpers/auth";
import { startOidcProvider, type CallbackRequest, type OidcProvider, type ProviderUser } from "../helpers/oidc-provider";

let app: TestApp;
let idp1: OidcProvider;
let idp2: OidcProvider;
let a: TestAuthApp;

const RETURN = "https://app.example.com/signed-in?from=idp";

const providersSetting = () => ({
  idp_1: { issuer: idp1.issuer, client_id: idp1.clientId, client_secret: idp1.clientSecret, native_client_ids: ["com.example.ios"] },
  idp_2: { issuer: idp2.issuer, client_id: idp2.clientId, client_secret: idp2.clientSecret },
});
const newApp = (extra: Record<string, unknown> = {}) =>
  createAuthApp(app, { allowed_redirect_origins: ["https://app.example.com", "https://*.example.org", "http://localhost:5173"], oauth_providers: providersSetting(), ...extra });

beforeAll(async () => {
  idp1 = await startOidcProvider({ now: () => app.clock.nowMs(), sendUserJson: true });
  // idp_2 only supports client_secret_post: the client must notice from discovery.
  idp2 = await startOidcProvider({ now: () => app.clock.nowMs(), authMethods: ["client_secret_post"] });
  app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true" });
  a = await newApp();
});
afterAll(async () => {
  await app.stop();
  idp1.stop();
  idp2.stop();
});
beforeEach(() => app.clock.advance(61 * SECOND));

let n = 0;
const person = (over: Partial<ProviderUser> = {}): Required<Pick<ProviderUser, "sub" | "email" | "name">> & ProviderUser => {
  const i = ++n;
  return { sub: `sub-${i}-${Date.now()}`, email: `fed${i}-${Date.now()}@example.com`, email_verified: true, name: `Person ${i}`, ...over } as any;
};

const authorize = (x: TestAuthApp, provider: string, returnTo = RETURN) => app.call("GET", x.path(`/auth/oauth/${provider}/authorize?return_to=${encodeURIComponent(returnTo)}`));

function send(cb: CallbackRequest, path = cb.path) {
  if (cb.method === "GET") return app.call("GET", path);
  return app.call("POST", path, { body: cb.form!.toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
}

async function toCallback(idp: OidcProvider, provider: string, x = a, returnTo?: string) {
  const s = await authorize(x, provider, returnTo);
  expect(s.status).toBe(302);
  return idp.authorize(s.headers.get("location")!);
}

/** Full web flow up to the redirect back: the auth_code. */
async function authCode(idp: OidcProvider, provider: string, x = a) {
  const r = await send(await toCallback(idp, provider, x));
  expect(r.status).toBe(303);
  return new URL(r.headers.get("location")!).searchParams.get("auth_code")!;
}

const exchange = (code: string, x = a) => app.call("POST", x.path("/auth/oauth/exchange"), { body: { code } });

async function webSignIn(idp: OidcProvider, provider: string, x = a) {
  const r = await exchange(await authCode(idp, provider, x), x);
  expect(r.status).toBe(200);
  return r.body as { access_token: string; refresh_token: string; mfa_required?: boolean; mfa_token?: string };
}

async function verified(x: TestAuthApp, token: string) {
  const jwks = await app.call("GET", x.path("/.well-known/jwks.json"));
  return (await jwtVerify(token, createLocalJWKSet(jwks.body), { issuer: x.issuer, currentDate: app.clock.now() })).payload;
}

const me = (token: string, x = a) => app.call("GET", x.path("/me"), { token });
const identities = (token: string, x = a) => app.call("GET", x.path("/me/identities"), { token });
const audit = (x: TestAuthApp) =>
  app.ctx.db.all<{ action: string; outcome: string; metadata: string }>("SELECT action, outcome, metadata FROM auth_audit WHERE app_id = ? ORDER BY id", x.id);

// Native flow helpers: the app hashes its raw nonce for the provider (SHA-256, hex).
const rawNonce = () => randomBytes(32).toString("base64url");
const sha256hex = (s: string) => createHash("sha256").update(s).digest("hex");
const nativeToken = (who: ProviderUser, nonce: string, over: Record<string, unknown> = {}) =>
  idp1.signIdToken({ sub: who.sub, email: who.email, email_verified: who.email_verified, nonce: sha256hex(nonce), ...over });
const native = (body: Record<string, unknown>, provider = "idp_1", x = a) => app.call("POST", x.path(`/auth/oauth/${provider}`), { body });

describe("provider settings", () => {
  test("secrets are write-only (hint shown, encrypted at rest); validation; partial update keeps the secret; null removes", async () => {
    const r = await app.call("GET", `/auth/v1/apps/${a.id}`, { token: a.key });
    const p = r.body.settings.oauth_providers;
    expect(Object.keys(p).sort()).toEqual(["idp_1", "idp_2"]);
    expect(p.idp_1).toEqual({ issuer: idp1.issuer, client_id: idp1.clientId, client_secret_hint: `...${idp1.clientSecret.slice(-4)}`, native_client_ids: ["com.example.ios"] });
    expect(JSON.stringify(r.body)).not.toContain(idp1.clientSecret);
    const raw = (await app.ctx.db.get<{ settings: string }>("SELECT settings FROM auth_apps WHERE id = ?", a.id))!.settings;
    expect(raw).not.toContain(idp1.clientSecret);
    expect(r.body.settings.mfa_for_federated).toBe(true);

    const x = await newApp();
    const bad = await app.call("PATCH", `/auth/v1/apps/${x.id}`, {
      token: x.key,
      body: { settings: { oauth_providers: { idp_4: {}, idp_3: { issuer: "ftp://x", client_id: "" }, idp_2: { native_client_ids: ["x"], extra: 1 } } } },
    });
    expect(bad.status).toBe(400);
    const fields = bad.body.error.details.map((d: any) => d.field).sort();
    expect(fields).toEqual(
      ["settings.oauth_providers.idp_2.extra", "settings.oauth_providers.idp_2.native_client_ids", "settings.oauth_providers.idp_3.client_id", "settings.oauth_providers.idp_3.client_secret", "settings.oauth_providers.idp_3.issuer", "settings.oauth_providers.idp_4"].sort(),
    );
    // Changing the client id alone keeps the stored secret; null removes a provider.
    const upd = await app.call("PATCH", `/auth/v1/apps/${x.id}`, { token: x.key, body: { settings: { oauth_providers: { idp_2: { client_id: "renamed" }, idp_1: null } } } });
    expect(upd.status).toBe(200);
    expect(upd.body.settings.oauth_providers).toEqual({ idp_2: { issuer: idp2.issuer, client_id: "renamed", client_secret_hint: `...${idp2.clientSecret.slice(-4)}`, native_client_ids: [] } });
    expect((await authorize(x, "idp_1")).body.error.code).toBe("UNKNOWN_OAUTH_PROVIDER");
  });

  test("an issuer the outbound guard refuses (private address without ALLOW_PRIVATE_TARGETS) is 400", async () => {
    const strict = await startTestApp();
    try {
      const owner = await ownerWithKey(strict);
      const r = await strict.call("POST", "/auth/v1/apps", {
        token: owner.token,
        body: { slug: "strict-app", display_name: "Strict", settings: { oauth_providers: { idp_3: { issuer: "http://169.254.169.254/", client_id: "c", client_secret: "s" } } } },
      });
      expect(r.status).toBe(400);
      expect(r.body.error.details[0].field).toBe("settings.oauth_providers.idp_3.issuer");
    } finally {
      await strict.stop();
    }
  });
});

describe("web flow", () => {
  test("idp_2: authorize 302, callback 303 with auth_code, exchange gives tokens with amr [oauth, idp_2]; the code works once", async () => {
    const who = person();
    idp2.user = who;
    const s = await authorize(a, "idp_2");
    expect(s.status).toBe(302);
    const q = new URL(s.headers.get("location")!).searchParams;
    expect(q.get("redirect_uri")).toBe(`${a.issuer}/v1/auth/oauth/idp_2/callback`);
    expect(q.get("code_challenge_method")).toBe("S256");
    const cb = await idp2.authorize(s.headers.get("location")!);
    const r = await send(cb);
    expect(r.status).toBe(303);
    const back = new URL(r.headers.get("location")!);
    expect(back.origin + back.pathname).toBe("https://app.example.com/signed-in");
    expect(back.searchParams.get("from")).toBe("idp");
    const code = back.searchParams.get("auth_code")!;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // client_secret_post, because discovery offers only that; PKCE verifier sent.
    const tr = idp2.tokenRequests.at(-1)!;
    expect(tr.auth).toBe("post");
    expect(tr.params.code_verifier).toBeTruthy();

    const t = await exchange(code);
    expect(t.status).toBe(200);
    expect(t.body.token_type).toBe("Bearer");
    const claims = await verified(a, t.body.access_token);
    expect(claims.amr).toEqual(["oauth", "idp_2"]);
    expect(claims.type).toBe("end_user");
    const m = await me(t.body.access_token);
    expect(m.body).toMatchObject({ email: who.email, email_verified: true, display_name: who.name });
    const ids = await identities(t.body.access_token);
    expect(ids.body.data).toEqual([expect.objectContaining({ provider: "idp_2", issuer: idp2.issuer, subject: who.sub, email: who.email })]);
    // Refresh keeps the amr.
    const refreshed = await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: t.body.refresh_token } });
    expect(claimsOf(refreshed.body.access_token).amr).toEqual(["oauth", "idp_2"]);

    const again = await exchange(code);
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe("INVALID_AUTH_CODE");

    const rows = await audit(a);
    expect(rows.some((x) => x.action === "user.create" && JSON.parse(x.metadata).method === "oauth")).toBe(true);
    expect(rows.some((x) => x.action === "user.identity.link" && JSON.parse(x.metadata).via === "new_user")).toBe(true);
    expect(rows.some((x) => x.action === "user.signin" && x.outcome === "success" && JSON.parse(x.metadata).method === "oauth")).toBe(true);

    // Signing in again is the same user.
    const second = await webSignIn(idp2, "idp_2");
    expect(claimsOf(second.access_token).sub).toBe(claims.sub);
  });

  test("idp_1 posts its callback as a form; the first-sign-in user JSON names a user whose token has no name", async () => {
    const who = person();
    idp1.user = { sub: who.sub, email: who.email, email_verified: "true" };
    const cb = await toCallback(idp1, "idp_1");
    expect(cb.method).toBe("POST");
    expect(cb.form!.get("user")).toBeTruthy();
    const r = await send(cb);
    expect(r.status).toBe(303);
    const t = await exchange(new URL(r.headers.get("location")!).searchParams.get("auth_code")!);
    expect(claimsOf(t.body.access_token).amr).toEqual(["oauth", "idp_1"]);
    expect((await me(t.body.access_token)).body).toMatchObject({ display_name: "First Sign-in", email: who.email, email_verified: true });
  });

  test("exchange code lives 60 seconds: works at 59.999 s, refused at 60 s", async () => {
    idp2.user = person();
    const early = await authCode(idp2, "idp_2");
    app.clock.advance(60 * SECOND - 1);
    expect((await exchange(early)).status).toBe(200);
    const late = await authCode(idp2, "idp_2");
    app.clock.advance(60 * SECOND);
    const r = await exchange(late);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("INVALID_AUTH_CODE");
  });

  test("an exchange code belongs to its App", async () => {
    const other = await newApp();
    idp2.user = person();
    const code = await authCode(idp2, "idp_2");
    expect((await exchange(code, other)).status).toBe(400);
    expect((await exchange(code)).status).toBe(200);
  });

  test("a provider error goes back to return_to with error=...", async () => {
    const s = await authorize(a, "idp_2");
    const state = new URL(s.headers.get("location")!).searchParams.get("state")!;
    const r = await app.call("GET", a.path(`/auth/oauth/idp_2/callback?state=${state}&error=access_denied`));
    expect(r.status).toBe(303);
    const back = new URL(r.headers.get("location")!);
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("auth_code")).toBeNull();
  });
});

describe("state", () => {
  test("reuse, expiry (10 minutes), provider mismatch and another App's state are 400", async () => {
    idp2.user = person();
    const cb = await toCallback(idp2, "idp_2");
    expect((await send(cb)).status).toBe(303);
    const reuse = await send(cb);
    expect(reuse.status).toBe(400);
    expect(reuse.body.error.code).toBe("INVALID_OAUTH_STATE");

    const ok = await toCallback(idp2, "idp_2");
    app.clock.advance(10 * MINUTE - SECOND);
    expect((await send(ok)).status).toBe(303);
    const late = await toCallback(idp2, "idp_2");
    app.clock.advance(10 * MINUTE);
    expect((await send(late)).body.error.code).toBe("INVALID_OAUTH_STATE");

    const mis = await toCallback(idp2, "idp_2");
    const r = await send(mis, mis.path.replace("/idp_2/", "/idp_1/"));
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("OAUTH_PROVIDER_MISMATCH");

    const other = await newApp();
    const foreign = await toCallback(idp2, "idp_2");
    const x = await send(foreign, foreign.path.replace(`/auth/${a.slug}/`, `/auth/${other.slug}/`));
    expect(x.status).toBe(400);
    expect(x.body.error.code).toBe("INVALID_OAUTH_STATE");
  });
});

describe("ID token verification", () => {
  test.each([
    ["wrong signature", { wrongKey: true }, "INVALID_ID_TOKEN"],
    ["wrong audience", { aud: "someone-else" }, "INVALID_ID_TOKEN"],
    ["wrong issuer", { iss: "http://127.0.0.1:1" }, "INVALID_ID_TOKEN"],
    ["expired", { expired: true }, "INVALID_ID_TOKEN"],
  ] as const)("%s: 401 %s, audited as a failed sign-in", async (_name, tweak, code) => {
    idp2.user = person();
    const cb = await toCallback(idp2, "idp_2");
    idp2.tweakNext(tweak as any);
    const r = await send(cb);
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe(code);
    expect((await audit(a)).at(-1)).toMatchObject({ action: "user.signin", outcome: "failure" });
  });

  test("replayed nonce: 401 NONCE_REPLAYED", async () => {
    idp2.user = person();
    await authCode(idp2, "idp_2");
    const used = idp2.nonces.at(-1)!;
    const cb = await toCallback(idp2, "idp_2");
    idp2.tweakNext({ nonce: used });
    const r = await send(cb);
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("NONCE_REPLAYED");
  });
});

describe("providers and return_to", () => {
  test("unconfigured provider: 400 UNKNOWN_OAUTH_PROVIDER on authorize, callback and native; native on idp_2 is 400 UNSUPPORTED_OAUTH_FLOW", async () => {
    for (const p of ["idp_3", "google"]) {
      expect((await authorize(a, p)).body.error.code).toBe("UNKNOWN_OAUTH_PROVIDER");
      expect((await app.call("GET", a.path(`/auth/oauth/${p}/callback?state=x&code=y`))).body.error.code).toBe("UNKNOWN_OAUTH_PROVIDER");
      const nat = await native({ id_token: "x.y.z", nonce: rawNonce() }, p);
      expect(nat.status).toBe(400);
      expect(nat.body.error.code).toBe("UNKNOWN_OAUTH_PROVIDER");
    }
    const r = await native({ id_token: "x.y.z", nonce: rawNonce() }, "idp_2");
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("UNSUPPORTED_OAUTH_FLOW");
  });

  test.each([
    ["https://app.example.com/x", 302],
    ["https://deep.example.org/x", 302], // wildcard entry
    ["http://localhost:5173/cb", 302],
    ["https://example.org/", 400], // wildcard: subdomains only
    ["https://evil-example.org/", 400],
    ["https://app.example.com.evil.com/", 400],
    ["https://app.example.com@evil.com/", 400],
    ["http://app.example.com/", 400], // scheme
    ["https://app.example.com:444/", 400], // port
    ["http://localhost:5174/", 400],
    ["app.example.com/x", 400],
  ])("return_to %s -> %d (App allowed_redirect_origins)", async (url, status) => {
    const r = await authorize(a, "idp_2", url);
    expect(r.status).toBe(status);
    if (status === 400) expect(r.body.error.details[0].field).toBe("return_to");
  });

  test("an App without allowed_redirect_origins allows no return_to", async () => {
    const x = await createAuthApp(app, { oauth_providers: providersSetting() });
    expect((await authorize(x, "idp_2", RETURN)).status).toBe(400);
  });
});

describe("native flow (idp_1)", () => {
  test("raw nonce hashed and compared; tokens with amr [oauth, idp_1]; the same nonce again is 401 NONCE_REPLAYED", async () => {
    const who = person({ name: undefined });
    const nonce = rawNonce();
    const id_token = await nativeToken(who, nonce);
    const r = await native({ id_token, nonce, user: { name: { firstName: "Nat", lastName: "Ive" }, email: "spoofed@evil.com" } });
    expect(r.status).toBe(200);
    const claims = await verified(a, r.body.access_token);
    expect(claims.amr).toEqual(["oauth", "idp_1"]);
    // The user JSON only names the user; its email is ignored.
    expect((await me(r.body.access_token)).body).toMatchObject({ display_name: "Nat Ive", email: who.email });

    const replay = await native({ id_token, nonce });
    expect(replay.status).toBe(401);
    expect(replay.body.error.code).toBe("NONCE_REPLAYED");
    const other = await native({ id_token: await nativeToken(who, nonce), nonce });
    expect(other.body.error.code).toBe("NONCE_REPLAYED");
  });

  test("nonce entropy: 43 base64url chars or 64 hex chars pass; 42, 63 hex and low-variety nonces are 400", async () => {
    const who = person();
    const ok43 = rawNonce();
    expect(ok43).toHaveLength(43);
    expect((await native({ id_token: await nativeToken(who, ok43), nonce: ok43 })).status).toBe(200);
    const ok64 = randomBytes(32).toString("hex");
    expect((await native({ id_token: await nativeToken(who, ok64), nonce: ok64 })).status).toBe(200);
    for (const bad of [rawNonce().slice(0, 42), randomBytes(32).toString("hex").slice(0, 63), "abcdefgh".repeat(8), "a+b/c".repeat(10), ""]) {
      const r = await native({ id_token: await nativeToken(who, bad), nonce: bad });
      expect(r.status).toBe(400);
      expect(r.body.error.details[0].field).toBe("nonce");
    }
  });

  test("the token's nonce must be the SHA-256 hex of the nonce sent; aud may be a native client id", async () => {
    const who = person();
    const nonce = rawNonce();
    const unhashed = await idp1.signIdToken({ sub: who.sub, nonce });
    const r = await native({ id_token: unhashed, nonce });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("INVALID_ID_TOKEN");
    const missing = await idp1.signIdToken({ sub: who.sub });
    expect((await native({ id_token: missing, nonce: rawNonce() })).status).toBe(401);

    idp1.tweakNext({ aud: "com.example.ios" });
    const n2 = rawNonce();
    expect((await native({ id_token: await nativeToken(who, n2), nonce: n2 })).status).toBe(200);
    idp1.tweakNext({ aud: "com.attacker.app" });
    const n3 = rawNonce();
    expect((await native({ id_token: await nativeToken(who, n3), nonce: n3 })).status).toBe(401);
    idp1.tweakNext({ wrongKey: true });
    const n4 = rawNonce();
    expect((await native({ id_token: await nativeToken(who, n4), nonce: n4 })).status).toBe(401);
    // The web flow does not accept native audiences.
    const cb = await toCallback(idp1, "idp_1");
    idp1.tweakNext({ aud: "com.example.ios" });
    expect((await send(cb)).status).toBe(401);
  });
});

describe("linking", () => {
  const adminUser = async (x: TestAuthApp, email: string, emailVerified: boolean) => {
    const r = await app.call("POST", x.path("/admin/users"), { token: x.key, body: { email, password: "correct horse battery", email_verified: emailVerified } });
    expect(r.status).toBe(201);
    return r.body.id as string;
  };
  const nativeSignIn = async (who: ProviderUser, x = a) => {
    const nonce = rawNonce();
    const r = await native({ id_token: await nativeToken(who, nonce), nonce }, "idp_1", x);
    expect(r.status).toBe(200);
    return r.body as { access_token: string };
  };

  test("provider-verified email + verified primary email here: linked to that user", async () => {
    const who = person();
    const id = await adminUser(a, who.email, true);
    const t = await nativeSignIn(who);
    expect(claimsOf(t.access_token).sub).toBe(id);
    expect((await audit(a)).some((r) => r.action === "user.identity.link" && JSON.parse(r.metadata).via === "email")).toBe(true);
    // The web flow with another provider links too.
    idp2.user = { ...who, sub: `g-${who.sub}` };
    expect(claimsOf((await webSignIn(idp2, "idp_2")).access_token).sub).toBe(id);
    expect((await identities(t.access_token)).body.data.map((i: any) => i.provider).sort()).toEqual(["idp_1", "idp_2"]);
  });

  test("provider-verified email matching an UNVERIFIED email here: a new user without email (no takeover)", async () => {
    const u = await signupEndUser(app, a, { username: `victim${++n}`, email: `victim${n}@example.com` });
    const victim = claimsOf(u.access).sub;
    const who = person({ email: u.email });
    const t = await nativeSignIn(who);
    expect(claimsOf(t.access_token).sub).not.toBe(victim);
    expect((await me(t.access_token)).body).toMatchObject({ email: null, email_verified: false });
    expect((await identities(u.access)).body.data).toHaveLength(0);
    // The identity keeps what the provider said.
    expect((await identities(t.access_token)).body.data[0].email).toBe(u.email);
  });

  test("an email the provider does NOT mark verified never links, even to a verified user here", async () => {
    const who = person({ email_verified: false });
    const id = await adminUser(a, who.email, true);
    const t = await nativeSignIn(who);
    expect(claimsOf(t.access_token).sub).not.toBe(id);
    expect((await me(t.access_token)).body.email).toBeNull();
  });

  test("new users: a verified provider email is kept verified; an unverified one is kept unverified (and cannot sign in by password flows)", async () => {
    const v = person();
    expect((await me((await nativeSignIn(v)).access_token)).body).toMatchObject({ email: v.email, email_verified: true });
    const u = person({ email_verified: "false" });
    expect((await me((await nativeSignIn(u)).access_token)).body).toMatchObject({ email: u.email, email_verified: false });
  });

  test("an App that refuses sign-ups refuses new federated users (403) but still links", async () => {
    const x = await newApp({ signup_enabled: false });
    const who = person();
    const nonce = rawNonce();
    const r = await native({ id_token: await nativeToken(who, nonce), nonce }, "idp_1", x);
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("SIGNUP_DISABLED");
    const id = await adminUser(x, who.email, true);
    expect(claimsOf((await nativeSignIn(who, x)).access_token).sub).toBe(id);
  });

  test("unlink: 409 for the last way to sign in, 404 for another user's identity, 204 when a password remains", async () => {
    const fed = await nativeSignIn(person());
    const only = (await identities(fed.access_token)).body.data[0].id;
    const last = await app.call("DELETE", a.path(`/me/identities/${only}`), { token: fed.access_token });
    expect(last.status).toBe(409);
    expect(last.body.error.code).toBe("LAST_SIGN_IN_METHOD");

    const who = person();
    await adminUser(a, who.email, true); // has a password
    const linked = await nativeSignIn(who);
    const id = (await identities(linked.access_token)).body.data[0].id;
    expect((await app.call("DELETE", a.path(`/me/identities/${id}`), { token: fed.access_token })).status).toBe(404);
    expect((await app.call("DELETE", a.path(`/me/identities/${id}`), { token: linked.access_token })).status).toBe(204);
    expect((await identities(linked.access_token)).body.data).toHaveLength(0);
    expect((await audit(a)).some((r) => r.action === "user.identity.unlink")).toBe(true);
    expect((await app.call("GET", a.path("/me/identities"))).status).toBe(401);
  });

  test("account status applies: suspended 403, blocked 401", async () => {
    const who = person();
    const t = await nativeSignIn(who);
    const id = claimsOf(t.access_token).sub;
    await app.call("PATCH", a.path(`/admin/users/${id}`), { token: a.key, body: { status: "suspended" } });
    const n1 = rawNonce();
    expect((await native({ id_token: await nativeToken(who, n1), nonce: n1 })).body.error.code).toBe("ACCOUNT_SUSPENDED");
    await app.call("PATCH", a.path(`/admin/users/${id}`), { token: a.key, body: { status: "blocked" } });
    const n2 = rawNonce();
    const r = await native({ id_token: await nativeToken(who, n2), nonce: n2 });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("INVALID_CREDENTIALS");
  });
});

describe("MFA after a federated sign-in", () => {
  const totpNow = (secret: string) => new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30, algorithm: "SHA1" }).generate({ timestamp: app.clock.nowMs() });

  async function federatedUserWithTotp(x: TestAuthApp, who: ProviderUser) {
    idp2.user = who;
    const t = await webSignIn(idp2, "idp_2", x);
    const e = await app.call("POST", x.path("/me/mfa/factors"), { token: t.access_token, body: { type: "totp", name: "Phone" } });
    expect(e.status).toBe(201);
    const c = await app.call("POST", x.path(`/me/mfa/factors/${e.body.id}/confirm`), { token: t.access_token, body: { code: totpNow(e.body.secret) } });
    expect(c.status).toBe(200);
    app.clock.advance(30 * SECOND);
    return e.body.secret as string;
  }

  test("web flow: the exchange answers the MFA challenge; verify gives amr [oauth, idp_2, totp]", async () => {
    const who = person();
    const secret = await federatedUserWithTotp(a, who);
    const ch = await exchange(await authCode(idp2, "idp_2"));
    expect(ch.status).toBe(200);
    expect(ch.body.mfa_required).toBe(true);
    expect(ch.body.access_token).toBeUndefined();
    const v = await app.call("POST", a.path("/auth/mfa/verify"), { body: { mfa_token: ch.body.mfa_token, code: totpNow(secret) } });
    expect(v.status).toBe(200);
    const claims = await verified(a, v.body.access_token);
    expect(claims.amr).toEqual(["oauth", "idp_2", "totp"]);
    expect(typeof claims.mfa_at).toBe("number");
  });

  test("native flow gets the challenge too; an App with mfa_for_federated false skips it", async () => {
    const who = person();
    await federatedUserWithTotp(a, who);
    const nonce = rawNonce();
    const r = await native({ id_token: await nativeToken({ ...who, sub: `n-${who.sub}` }, nonce), nonce });
    // idp_1 links by the verified email to the same user, who has a factor.
    expect(r.body.mfa_required).toBe(true);

    const x = await newApp({ mfa_for_federated: false });
    await federatedUserWithTotp(x, person());
    const t = await exchange(await authCode(idp2, "idp_2", x), x);
    expect(t.body.mfa_required).toBeUndefined();
    expect(claimsOf(t.body.access_token).amr).toEqual(["oauth", "idp_2"]);
  });
});

describe("rate limit", () => {
  test("30 authorizes a minute per App and address; the 31st is 429", async () => {
    const x = await newApp();
    for (let i = 0; i < 30; i++) expect((await authorize(x, "idp_2")).status).toBe(302);
    const r = await authorize(x, "idp_2");
    expect(r.status).toBe(429);
    expect(r.body.error.code).toBe("RATE_LIMITED");
    expect((await authorize(a, "idp_2")).status).toBe(302);
  });
});
