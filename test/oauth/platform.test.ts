// source-only: every test starts with a fresh per-address OAuth start budget (30 a minute) by moving the injected clock (beforeEach), and many move it through state expiry or read the store (app.ctx.db); the console OAuth routes run on the binary in platform/every-route
/**
 * Console federated sign-in against real OpenID providers on loopback (test/helpers/
 * oidc-provider.ts): idp_1 posts its callback as a form (Apple-style), idp_2 redirects with
 * the code in the query (Google-style); idp_3 is left unconfigured.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { MINUTE, SECOND } from "../../src/core/clock";
import { signup, startTestAppWithMail, type TestApp } from "../helpers/app";
import { startOidcProvider, type CallbackRequest, type OidcProvider } from "../helpers/oidc-provider";
import type { SmtpSink } from "../helpers/smtp-sink";

let app: TestApp;
let sink: SmtpSink;
let stopApp: () => Promise<void>;
let idp1: OidcProvider;
let idp2: OidcProvider;

const ORIGINS = "https://console.example.com,https://*.example.com,http://localhost:3000";

beforeAll(async () => {
  idp1 = await startOidcProvider({ now: () => app.clock.nowMs(), sendUserJson: true });
  idp2 = await startOidcProvider({ now: () => app.clock.nowMs() });
  ({ app, sink, stop: stopApp } = await startTestAppWithMail({
    ALLOW_PRIVATE_TARGETS: "true",
    OAUTH_RETURN_TO_ORIGINS: ORIGINS,
    IDP_1_ISSUER: idp1.issuer,
    IDP_1_CLIENT_ID: idp1.clientId,
    IDP_1_CLIENT_SECRET: idp1.clientSecret,
    IDP_2_ISSUER: idp2.issuer,
    IDP_2_CLIENT_ID: idp2.clientId,
    IDP_2_CLIENT_SECRET: idp2.clientSecret,
  }));
});
afterAll(async () => {
  await stopApp();
  idp1.stop();
  idp2.stop();
});
// Each test starts with a fresh per-address start budget (30 a minute).
beforeEach(() => app.clock.advance(61 * SECOND));

let n = 0;
const person = (over: Partial<{ sub: string; email: string; email_verified: boolean | string; name: string }> = {}) => {
  const i = ++n;
  return { sub: `sub-${i}-${Date.now()}`, email: `fed${i}-${Date.now()}@example.com`, email_verified: true, name: `Person ${i}`, ...over };
};

const start = (provider: string, returnTo = "https://console.example.com/after?x=1") =>
  app.call("GET", `/platform/v1/auth/oauth/${provider}/start?return_to=${encodeURIComponent(returnTo)}`);

function send(cb: CallbackRequest, path = cb.path) {
  if (cb.method === "GET") return app.call("GET", path);
  return app.call("POST", path, { body: cb.form!.toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
}

/** start -> provider -> callback request (not yet sent). */
async function toCallback(idp: OidcProvider, provider: string, returnTo?: string) {
  const s = await start(provider, returnTo);
  expect(s.status).toBe(302);
  return idp.authorize(s.headers.get("location")!);
}

async function signIn(idp: OidcProvider, provider: string) {
  const r = await send(await toCallback(idp, provider));
  expect(r.status).toBe(200);
  return r.body as { tokens: { access_token: string; refresh_token: string }; return_to: string };
}

const introspect = (token: string) => app.call("GET", "/platform/v1/introspect", { token });
const accountOf = async (token: string) => (await introspect(token)).body.account as { id: string; email: string; username: string; display_name: string | null };
const identities = (token: string) => app.call("GET", "/platform/v1/me/identities", { token });
const auditRows = (action: string) =>
  app.ctx.db.all<{ actor_id: string | null; metadata: string }>("SELECT actor_id, metadata FROM platform_audit_log WHERE action = ? ORDER BY id", action);

describe("web flow", () => {
  test("idp_2 (query): 302 with state, nonce and PKCE; callback answers {tokens, return_to}, creates the account, sets the cookie", async () => {
    const who = person();
    idp2.user = who;
    const s = await start("idp_2");
    expect(s.status).toBe(302);
    expect(s.headers.get("cache-control")).toBe("no-store");
    const loc = new URL(s.headers.get("location")!);
    expect(loc.origin + loc.pathname).toBe(`${idp2.issuer}/authorize`);
    const q = loc.searchParams;
    expect(q.get("client_id")).toBe(idp2.clientId);
    expect(q.get("redirect_uri")).toBe("http://localhost:8080/platform/v1/auth/oauth/idp_2/callback");
    expect(q.get("response_type")).toBe("code");
    expect(q.get("code_challenge_method")).toBe("S256");
    expect(q.get("state")!.length).toBeGreaterThanOrEqual(43);
    expect(q.get("nonce")!.length).toBeGreaterThanOrEqual(43);
    expect(q.get("response_mode")).toBeNull();
    // Nothing secret is stored in the clear.
    const row = (await app.ctx.db.get<{ state_hash: string; nonce_hash: string; code_verifier_enc: string }>("SELECT * FROM platform_oauth_states ORDER BY created_at DESC LIMIT 1"))!;
    expect(row.state_hash).not.toBe(q.get("state"));
    expect(row.nonce_hash).not.toBe(q.get("nonce"));
    expect(row.code_verifier_enc.startsWith("v1.")).toBe(true);

    const cb = await idp2.authorize(loc.href);
    expect(cb.method).toBe("GET");
    const r = await send(cb);
    expect(r.status).toBe(200);
    expect(r.body.return_to).toBe("https://console.example.com/after?x=1");
    expect(r.body.tokens.token_type).toBe("Bearer");
    expect(r.headers.get("set-cookie")).toContain("auth_token=");
    // PKCE: the verifier went to the token endpoint with client_secret_basic.
    const tr = idp2.tokenRequests.at(-1)!;
    expect(tr.auth).toBe("basic");
    expect(tr.params.code_verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const acc = await accountOf(r.body.tokens.access_token);
    expect(acc.email).toBe(who.email);
    expect(acc.display_name).toBe(who.name);
    const ids = await identities(r.body.tokens.access_token);
    expect(ids.status).toBe(200);
    expect(ids.body.data).toHaveLength(1);
    expect(ids.body.data[0]).toMatchObject({ provider: "idp_2", issuer: idp2.issuer, subject: who.sub, email: who.email });
    expect(ids.body.pagination).toEqual({ next_cursor: null, has_more: false });

    // The same identity signs in to the same account.
    const again = await signIn(idp2, "idp_2");
    expect((await accountOf(again.tokens.access_token)).id).toBe(acc.id);
    const signins = (await auditRows("account.signin")).filter((a) => a.actor_id === acc.id).map((a) => JSON.parse(a.metadata));
    expect(signins).toEqual([{ method: "oauth", provider: "idp_2" }, { method: "oauth", provider: "idp_2" }]);
  });

  test("idp_1 (form_post): the callback is a form post; the first-sign-in user JSON names the account when the token has no name", async () => {
    const who = person();
    idp1.user = { sub: who.sub, email: who.email, email_verified: "true" }; // Apple sends the string "true"
    const cb = await toCallback(idp1, "idp_1");
    expect(cb.method).toBe("POST");
    expect(cb.form!.get("user")).toContain("First");
    const s = new URL((await start("idp_1")).headers.get("location")!);
    expect(s.searchParams.get("response_mode")).toBe("form_post");
    const r = await send(cb);
    expect(r.status).toBe(200);
    const acc = await accountOf(r.body.tokens.access_token);
    expect(acc.display_name).toBe("First Sign-in");
    expect(acc.email).toBe(who.email);
  });

  test("a provider error in the callback consumes the state: 400 OAUTH_PROVIDER_ERROR", async () => {
    const s = await start("idp_2");
    const state = new URL(s.headers.get("location")!).searchParams.get("state")!;
    const r = await app.call("GET", `/platform/v1/auth/oauth/idp_2/callback?state=${state}&error=access_denied`);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("OAUTH_PROVIDER_ERROR");
  });

  test("a code the provider refuses is 401 OAUTH_CODE_REJECTED", async () => {
    idp2.user = person();
    const cb = await toCallback(idp2, "idp_2");
    cb.url.searchParams.set("code", "not-a-code");
    const r = await app.call("GET", cb.url.pathname + cb.url.search);
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("OAUTH_CODE_REJECTED");
  });

  test("callback without code or id_token is 400", async () => {
    const s = await start("idp_2");
    const state = new URL(s.headers.get("location")!).searchParams.get("state")!;
    const r = await app.call("POST", "/platform/v1/auth/oauth/idp_2/callback", { body: { state } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("VALIDATION_ERROR");
  });
});

describe("providers", () => {
  test("GET /platform/v1/auth/providers (no credential) lists the configured ones with the issuer host and the start path", async () => {
    const r = await app.call("GET", "/platform/v1/auth/providers");
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual([
      { id: "idp_1", display_name: new URL(idp1.issuer).host, start_path: "/platform/v1/auth/oauth/idp_1/start" },
      { id: "idp_2", display_name: new URL(idp2.issuer).host, start_path: "/platform/v1/auth/oauth/idp_2/start" },
    ]);
    // The start path works as listed.
    expect((await app.call("GET", `${r.body.data[1].start_path}?return_to=${encodeURIComponent("https://console.example.com/")}`)).status).toBe(302);
  });

  test("unconfigured (idp_3) and unknown ids answer 400 UNKNOWN_OAUTH_PROVIDER at start and callback", async () => {
    for (const p of ["idp_3", "github", "idp_4"]) {
      const s = await start(p);
      expect(s.status).toBe(400);
      expect(s.body.error.code).toBe("UNKNOWN_OAUTH_PROVIDER");
      const c = await app.call("POST", `/platform/v1/auth/oauth/${p}/callback`, { body: { state: "x", code: "y" } });
      expect(c.status).toBe(400);
      expect(c.body.error.code).toBe("UNKNOWN_OAUTH_PROVIDER");
    }
    // An unknown provider wins over a bad return_to.
    const both = await start("idp_3", "https://evil.com/");
    expect(both.body.error.code).toBe("UNKNOWN_OAUTH_PROVIDER");
  });
});

describe("return_to allowlist (https://console.example.com, https://*.example.com, http://localhost:3000)", () => {
  const allowed = [
    "https://console.example.com/after",
    "https://CONSOLE.example.com:443/x?y=1#frag",
    "https://app.example.com/",
    "https://xn--bcher-kva.example.com/",
    "http://localhost:3000/cb",
  ];
  const refused = [
    "https://example.com/", // the wildcard covers subdomains only
    "https://a.b.example.com/", // exactly one label
    "https://evil-example.com/",
    "https://evilexample.com/",
    "https://example.com.evil.com/",
    "https://console.example.com.evil.com/",
    "https://console.example.com@evil.com/",
    "https://user:pw@console.example.com/",
    "https://evil.com\\@console.example.com/",
    "https://evil.com#@console.example.com/",
    "http://console.example.com/", // scheme
    "https://console.example.com:8443/", // port
    "http://localhost:3001/",
    "https://localhost:3000/",
    "http://localhost/",
    "https:console.example.com/x", // not written with //
    "//console.example.com/x",
    "/relative",
    "javascript:alert(1)//https://console.example.com",
    "https://console.example.com/\nx",
    "",
  ];

  test.each(allowed)("allowed: %s", async (url) => {
    const r = await start("idp_2", url);
    expect(r.status).toBe(302);
  });

  test.each(refused)("refused: %s", async (url) => {
    const r = await start("idp_2", url);
    expect(r.status).toBe(400);
    expect(r.body.error.details[0].field).toBe("return_to");
  });

  test("longer than 2048 characters is refused", async () => {
    const base = "https://console.example.com/";
    expect((await start("idp_2", base + "a".repeat(2048 - base.length))).status).toBe(302);
    expect((await start("idp_2", base + "a".repeat(2049 - base.length))).status).toBe(400);
  });

  test("missing return_to is 400; the callback returns the normalised URL", async () => {
    const r = await app.call("GET", "/platform/v1/auth/oauth/idp_2/start");
    expect(r.status).toBe(400);
    expect(r.body.error.details[0].field).toBe("return_to");
    idp2.user = person();
    const done = await send(await toCallback(idp2, "idp_2", "https://CONSOLE.example.com:443/x?y=1#frag"));
    expect(done.body.return_to).toBe("https://console.example.com/x?y=1#frag");
  });
});

describe("state", () => {
  test("single use: replaying a finished callback is 400 INVALID_OAUTH_STATE", async () => {
    idp2.user = person();
    const cb = await toCallback(idp2, "idp_2");
    expect((await send(cb)).status).toBe(200);
    const again = await send(cb);
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe("INVALID_OAUTH_STATE");
  });

  test("unknown state is 400; a missing state is 400", async () => {
    const r = await app.call("GET", "/platform/v1/auth/oauth/idp_2/callback?state=made-up&code=x");
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("INVALID_OAUTH_STATE");
    const m = await app.call("GET", "/platform/v1/auth/oauth/idp_2/callback?code=x");
    expect(m.status).toBe(400);
  });

  test("expiry: valid for 10 minutes (works at 9:59, refused at 10:00)", async () => {
    idp2.user = person();
    const early = await toCallback(idp2, "idp_2");
    app.clock.advance(10 * MINUTE - SECOND);
    expect((await send(early)).status).toBe(200);

    app.clock.advance(MINUTE);
    const late = await toCallback(idp2, "idp_2");
    app.clock.advance(10 * MINUTE);
    const r = await send(late);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("INVALID_OAUTH_STATE");
  });

  test("a state minted for idp_2 delivered to idp_1's callback is 400 OAUTH_PROVIDER_MISMATCH, and it is burnt", async () => {
    idp2.user = person();
    const cb = await toCallback(idp2, "idp_2");
    const wrong = cb.path.replace("/idp_2/", "/idp_1/");
    const r = await send(cb, wrong);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("OAUTH_PROVIDER_MISMATCH");
    expect((await send(cb)).body.error.code).toBe("INVALID_OAUTH_STATE");
  });
});

describe("ID token verification", () => {
  async function withTweak(t: Parameters<OidcProvider["tweakNext"]>[0]) {
    idp2.user = person();
    const cb = await toCallback(idp2, "idp_2");
    idp2.tweakNext(t);
    return send(cb);
  }

  test.each([
    ["wrong signature (a key the JWKS lacks, same kid)", { wrongKey: true }, /signature/],
    ["unknown key id", { wrongKey: true, kid: "someone-else" }, /key/],
    ["wrong audience", { aud: "another-client" }, /aud/],
    ["several audiences without azp naming us", { aud: ["another-client", "x"] }, /aud/],
    ["wrong issuer", { iss: "https://evil.example.com" }, /iss/],
    ["expired", { expired: true }, /expired/],
    ["no nonce", { nonce: null }, /nonce/],
    ["someone else's nonce", { nonce: "a-nonce-nobody-issued-aaaaaaaaaaaaaaaaaaaaaaaaaa" }, /nonce/],
  ] as const)("%s: 401 INVALID_ID_TOKEN", async (_name, tweak, reason) => {
    const r = await withTweak(tweak as any);
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("INVALID_ID_TOKEN");
    expect(r.body.error.message).toMatch(reason);
  });

  test("a provider key rotation is picked up by re-fetching the JWKS, at most every 30 s", async () => {
    idp2.user = person();
    await signIn(idp2, "idp_2"); // key set cached
    await idp2.rotateKey();
    app.clock.advance(30 * SECOND);
    const before = idp2.jwksFetches;
    await signIn(idp2, "idp_2");
    expect(idp2.jwksFetches).toBe(before + 1);
    // Another new kid right after that fetch: no second fetch within 30 s, so it is refused...
    await idp2.rotateKey();
    app.clock.advance(30 * SECOND - 1);
    const early = await send(await toCallback(idp2, "idp_2"));
    expect(early.status).toBe(401);
    expect(idp2.jwksFetches).toBe(before + 1);
    // ...and accepted once 30 s have passed.
    app.clock.advance(1);
    await signIn(idp2, "idp_2");
    expect(idp2.jwksFetches).toBe(before + 2);
  });

  test("several audiences with azp naming us are fine", async () => {
    const r = await withTweak({ aud: [idp2.clientId, "other"], azp: idp2.clientId });
    expect(r.status).toBe(200);
  });

  test("a nonce that a finished sign-in used is 401 NONCE_REPLAYED", async () => {
    idp2.user = person();
    await signIn(idp2, "idp_2");
    const used = idp2.nonces.at(-1)!;
    const r = await withTweak({ nonce: used });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("NONCE_REPLAYED");
  });

  test("an id_token posted directly (no code) is verified the same way and bound to the state's nonce", async () => {
    const who = person();
    const s = await start("idp_1");
    const q = new URL(s.headers.get("location")!).searchParams;
    const token = await idp1.signIdToken({ sub: who.sub, email: who.email, email_verified: true, nonce: q.get("nonce") });
    const ok = await app.call("POST", "/platform/v1/auth/oauth/idp_1/callback", { body: { state: q.get("state"), id_token: token } });
    expect(ok.status).toBe(200);
    // Replayed into a new flow: the nonce belongs to the finished one.
    const s2 = new URL((await start("idp_1")).headers.get("location")!).searchParams;
    const replay = await app.call("POST", "/platform/v1/auth/oauth/idp_1/callback", { body: { state: s2.get("state"), id_token: token } });
    expect(replay.status).toBe(401);
    expect(replay.body.error.code).toBe("NONCE_REPLAYED");
    const failures = (await auditRows("account.signin_failed")).map((a) => JSON.parse(a.metadata));
    expect(failures).toContainEqual({ method: "oauth", provider: "idp_1", reason: "nonce_replayed" });
  });
});

describe("accounts and linking", () => {
  async function provenAccount() {
    const u = await signup(app);
    await app.call("POST", "/platform/v1/auth/password/request-reset", { body: { email: u.email } });
    await app.platform.accounts.idle();
    await app.ctx.mailer.deliverPending();
    const mail = await sink.waitFor((m) => m.to.includes(u.email));
    const code = /\b(\d{6})\b/.exec(mail.text)![1];
    const reset = await app.call("POST", "/platform/v1/auth/password/reset", { body: { token: code, new_password: "a brand new password" } });
    expect(reset.status).toBe(204);
    const s = await app.call("POST", "/platform/v1/auth/signin", { body: { identifier: u.email, password: "a brand new password" } });
    return { ...u, password: "a brand new password", token: s.body.access_token as string };
  }

  test("a verified provider email links to the account whose email is proven here (password reset)", async () => {
    const u = await provenAccount();
    const mine = await accountOf(u.token);
    idp2.user = person({ email: u.email.toUpperCase() });
    const r = await signIn(idp2, "idp_2");
    expect((await accountOf(r.tokens.access_token)).id).toBe(mine.id);
    expect((await identities(u.token)).body.data).toHaveLength(1);
    expect((await auditRows("account.identity.link")).some((a) => a.actor_id === mine.id)).toBe(true);
  });

  test("never takes over: a verified provider email matching an account whose email was never proven is 401, nothing linked", async () => {
    const u = await signup(app);
    idp2.user = person({ email: u.email });
    const r = await send(await toCallback(idp2, "idp_2"));
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("IDENTITY_NOT_RESOLVABLE");
    expect((await identities(u.token)).body.data).toHaveLength(0);
    // The password still works, and nobody got a session for the account.
    expect((await app.call("POST", "/platform/v1/auth/signin", { body: { identifier: u.email, password: u.password } })).status).toBe(200);
  });

  test("an unverified provider email neither links nor creates: 401 IDENTITY_NOT_RESOLVABLE", async () => {
    const proven = await provenAccount();
    for (const who of [person({ email: proven.email, email_verified: false }), person({ email_verified: false }), person({ email_verified: "false" as any })]) {
      idp2.user = who;
      const r = await send(await toCallback(idp2, "idp_2"));
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe("IDENTITY_NOT_RESOLVABLE");
      expect((await app.ctx.db.get("SELECT 1 AS x FROM platform_accounts WHERE email = ?", who.email.toLowerCase())) !== null).toBe(who.email === proven.email);
    }
    expect((await identities(proven.token)).body.data).toHaveLength(0);
  });

  test("a second provider with the same verified email links to the federated account", async () => {
    const who = person();
    idp2.user = who;
    const first = await signIn(idp2, "idp_2");
    idp1.user = { ...who, sub: `other-${who.sub}` };
    const second = await signIn(idp1, "idp_1");
    expect((await accountOf(second.tokens.access_token)).id).toBe((await accountOf(first.tokens.access_token)).id);
    const ids = await identities(first.tokens.access_token);
    expect(ids.body.data.map((i: any) => i.provider).sort()).toEqual(["idp_1", "idp_2"]);
  });

  test("unlinking: never the last way to sign in (409), 404 for another account's identity, 204 otherwise", async () => {
    const who = person();
    idp2.user = who;
    const first = await signIn(idp2, "idp_2");
    const token = first.tokens.access_token;
    const only = (await identities(token)).body.data[0].id;
    const last = await app.call("DELETE", `/platform/v1/me/identities/${only}`, { token });
    expect(last.status).toBe(409);
    expect(last.body.error.code).toBe("LAST_SIGN_IN_METHOD");

    idp1.user = { ...who, sub: `second-${who.sub}` };
    await signIn(idp1, "idp_1");
    const other = await signup(app);
    expect((await app.call("DELETE", `/platform/v1/me/identities/${only}`, { token: other.token })).status).toBe(404);
    expect((await app.call("DELETE", `/platform/v1/me/identities/${only}`, { token })).status).toBe(204);
    const left = (await identities(token)).body.data;
    expect(left.map((i: any) => i.provider)).toEqual(["idp_1"]);
    expect((await app.call("DELETE", `/platform/v1/me/identities/${left[0].id}`, { token })).status).toBe(409);
    // An unlinked identity that signs in again starts over: same verified email, proven here -> links again.
    idp2.user = who;
    const back = await signIn(idp2, "idp_2");
    expect((await accountOf(back.tokens.access_token)).id).toBe((await accountOf(token)).id);
  });

  test("a password account may unlink its only identity", async () => {
    const u = await provenAccount();
    idp2.user = person({ email: u.email });
    await signIn(idp2, "idp_2");
    const id = (await identities(u.token)).body.data[0].id;
    expect((await app.call("DELETE", `/platform/v1/me/identities/${id}`, { token: u.token })).status).toBe(204);
  });

  test("identities need a signed-in caller", async () => {
    expect((await app.call("GET", "/platform/v1/me/identities")).status).toBe(401);
  });
});

describe("rate limit", () => {
  test("30 starts a minute per client address; the 31st is 429 RATE_LIMITED with Retry-After", async () => {
    for (let i = 0; i < 30; i++) expect((await start("idp_2")).status).toBe(302);
    const r = await start("idp_2");
    expect(r.status).toBe(429);
    expect(r.body.error.code).toBe("RATE_LIMITED");
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    app.clock.advance(MINUTE);
    expect((await start("idp_2")).status).toBe(302);
  });
});
