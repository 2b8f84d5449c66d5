/**
 * A small but real OpenID Connect provider on loopback (jose + Bun.serve), for federated
 * sign-in tests: discovery, JWKS, authorize (302 back with code and state, or an
 * auto-submitting form for response_mode=form_post), and a token endpoint that checks the
 * client secret (basic or post), the redirect_uri and the PKCE verifier, then returns an
 * RS256 ID token carrying the nonce it was given at authorize.
 *
 * Tests decide who signs in (`provider.user`) and may make the next ID token bad on
 * purpose (`provider.tweakNext`): signed with a key the JWKS lacks, wrong aud or iss,
 * expired, another nonce. Times come from `now()` (the app's injected clock).
 */
import { createHash, randomBytes } from "node:crypto";
import { SignJWT, exportJWK, generateKeyPair, type JWK } from "jose";

export interface ProviderUser {
  sub: string;
  email?: string;
  email_verified?: boolean | string;
  name?: string;
}

export interface TokenTweaks {
  /** Sign with a key the JWKS does not publish (same kid unless `kid` is given). */
  wrongKey?: boolean;
  kid?: string;
  aud?: string | string[];
  azp?: string;
  iss?: string;
  /** exp an hour before now. */
  expired?: boolean;
  /** Replace the nonce claim (null: leave it out). */
  nonce?: string | null;
}

export interface CallbackRequest {
  method: "GET" | "POST";
  url: URL;
  /** Path and query on the app under test (the redirect_uri's origin is the app's PUBLIC_URL). */
  path: string;
  /** The posted form (form_post only). */
  form?: URLSearchParams;
}

export interface OidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Who signs in at the next authorize (stays until changed). */
  user: ProviderUser;
  /** Applies to the next ID token only (token endpoint or signIdToken). */
  tweakNext(t: TokenTweaks): void;
  /** Plays the browser at the provider: the callback request the provider's answer leads to. */
  authorize(url: string): Promise<CallbackRequest>;
  /** An ID token as the provider would issue it (native flow tests). */
  signIdToken(claims: Record<string, unknown>): Promise<string>;
  /** Starts signing with a new key (new kid), published next to the old ones. */
  rotateKey(): Promise<void>;
  /** How often the JWKS was fetched. */
  readonly jwksFetches: number;
  /** Nonces received at authorize, oldest first. */
  nonces: string[];
  /** Token endpoint calls: how the client authenticated and what it sent. */
  tokenRequests: { auth: "basic" | "post"; params: Record<string, string> }[];
  stop(): void;
}

interface IssuedCode {
  redirectUri: string;
  nonce: string;
  challenge: string;
  user: ProviderUser;
  used: boolean;
}

const html = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

export async function startOidcProvider(opts: { now: () => number; clientId?: string; clientSecret?: string; sendUserJson?: boolean; authMethods?: string[] }): Promise<OidcProvider> {
  const clientId = opts.clientId ?? `client-${randomBytes(4).toString("hex")}`;
  const clientSecret = opts.clientSecret ?? randomBytes(24).toString("base64url");
  const evil = await generateKeyPair("RS256", { extractable: true });
  const published: JWK[] = [];
  let current!: { privateKey: CryptoKey; kid: string };
  async function newKey() {
    const kp = await generateKeyPair("RS256", { extractable: true });
    const kid = `k-${randomBytes(4).toString("hex")}`;
    published.push({ ...(await exportJWK(kp.publicKey)), kid, alg: "RS256", use: "sig" });
    current = { privateKey: kp.privateKey, kid };
  }
  await newKey();
  const codes = new Map<string, IssuedCode>();
  const seenSubs = new Set<string>();
  let tweaks: TokenTweaks = {};
  let jwksFetches = 0;
  let issuer = "";

  const state = {
    user: { sub: "sub-1", email: "person@example.com", email_verified: true, name: "Pat Person" } as ProviderUser,
    nonces: [] as string[],
    tokenRequests: [] as OidcProvider["tokenRequests"],
  };

  async function sign(claims: Record<string, unknown>) {
    const t = tweaks;
    tweaks = {};
    const nowSec = Math.floor(opts.now() / 1000);
    const body: Record<string, unknown> = { ...claims };
    if (t.nonce !== undefined) {
      if (t.nonce === null) delete body.nonce;
      else body.nonce = t.nonce;
    }
    if (t.azp) body.azp = t.azp;
    const iat = t.expired ? nowSec - 7200 : nowSec;
    return new SignJWT(body)
      .setProtectedHeader({ alg: "RS256", kid: t.kid ?? current.kid, typ: "JWT" })
      .setIssuer(t.iss ?? issuer)
      .setAudience(t.aud ?? clientId)
      .setIssuedAt(iat)
      .setExpirationTime(t.expired ? nowSec - 3600 : nowSec + 600)
      .sign(t.wrongKey ? evil.privateKey : current.privateKey);
  }

  const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      if (url.pathname === "/.well-known/openid-configuration") {
        return json(200, {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          response_types_supported: ["code"],
          response_modes_supported: ["query", "form_post"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["RS256"],
          token_endpoint_auth_methods_supported: opts.authMethods ?? ["client_secret_basic", "client_secret_post"],
          code_challenge_methods_supported: ["S256"],
          scopes_supported: ["openid", "email", "profile", "name"],
        });
      }
      if (url.pathname === "/jwks") {
        jwksFetches++;
        return json(200, { keys: published });
      }
      if (url.pathname === "/authorize") {
        const q = url.searchParams;
        const problems: string[] = [];
        if (q.get("response_type") !== "code") problems.push("response_type");
        if (q.get("client_id") !== clientId) problems.push("client_id");
        if (!(q.get("scope") ?? "").split(" ").includes("openid")) problems.push("scope");
        if (q.get("code_challenge_method") !== "S256" || !q.get("code_challenge")) problems.push("pkce");
        for (const k of ["state", "nonce", "redirect_uri"]) if (!q.get(k)) problems.push(k);
        if (problems.length) return new Response(`bad authorize request: ${problems.join(", ")}`, { status: 400 });
        const code = randomBytes(16).toString("hex");
        const user = { ...state.user };
        codes.set(code, { redirectUri: q.get("redirect_uri")!, nonce: q.get("nonce")!, challenge: q.get("code_challenge")!, user, used: false });
        state.nonces.push(q.get("nonce")!);
        const back = new URL(q.get("redirect_uri")!);
        if (q.get("response_mode") === "form_post") {
          const fields: Record<string, string> = { code, state: q.get("state")! };
          // Like Apple: name and email only the first time this user signs in to this client.
          if (opts.sendUserJson && !seenSubs.has(user.sub)) fields.user = JSON.stringify({ name: { firstName: "First", lastName: "Sign-in" }, email: user.email });
          seenSubs.add(user.sub);
          const inputs = Object.entries(fields).map(([k, v]) => `<input type="hidden" name="${html(k)}" value="${html(v)}">`).join("");
          return new Response(`<!doctype html><html><body onload="document.forms[0].submit()"><form method="post" action="${html(back.href)}">${inputs}</form></body></html>`, {
            headers: { "content-type": "text/html" },
          });
        }
        back.searchParams.set("code", code);
        back.searchParams.set("state", q.get("state")!);
        return new Response(null, { status: 302, headers: { location: back.href } });
      }
      if (url.pathname === "/token" && req.method === "POST") {
        const params = Object.fromEntries(new URLSearchParams(await req.text()));
        const basic = req.headers.get("authorization");
        let auth: "basic" | "post";
        let id: string | undefined, secret: string | undefined;
        if (basic?.startsWith("Basic ")) {
          auth = "basic";
          const [u, p] = Buffer.from(basic.slice(6), "base64").toString().split(":");
          id = decodeURIComponent(u.replace(/\+/g, " "));
          secret = decodeURIComponent(p.replace(/\+/g, " "));
        } else {
          auth = "post";
          id = params.client_id;
          secret = params.client_secret;
        }
        state.tokenRequests.push({ auth, params });
        if (id !== clientId || secret !== clientSecret) return json(401, { error: "invalid_client" });
        if (params.grant_type !== "authorization_code") return json(400, { error: "unsupported_grant_type" });
        const c = codes.get(params.code ?? "");
        if (!c || c.used || c.redirectUri !== params.redirect_uri) return json(400, { error: "invalid_grant" });
        const challenge = createHash("sha256").update(params.code_verifier ?? "").digest("base64url");
        if (challenge !== c.challenge) return json(400, { error: "invalid_grant", error_description: "PKCE verification failed" });
        c.used = true;
        const claims: Record<string, unknown> = { sub: c.user.sub, nonce: c.nonce };
        if (c.user.email !== undefined) claims.email = c.user.email;
        if (c.user.email_verified !== undefined) claims.email_verified = c.user.email_verified;
        if (c.user.name !== undefined) claims.name = c.user.name;
        return json(200, { access_token: randomBytes(16).toString("hex"), token_type: "Bearer", expires_in: 600, id_token: await sign(claims) });
      }
      return new Response("not found", { status: 404 });
    },
  });
  issuer = `http://127.0.0.1:${server.port}`;

  return {
    issuer,
    clientId,
    clientSecret,
    get user() {
      return state.user;
    },
    set user(u: ProviderUser) {
      state.user = u;
    },
    nonces: state.nonces,
    tokenRequests: state.tokenRequests,
    tweakNext(t) {
      tweaks = t;
    },
    async authorize(authorizeUrl) {
      const res = await fetch(authorizeUrl, { redirect: "manual" });
      if (res.status === 302) {
        const url = new URL(res.headers.get("location")!);
        return { method: "GET", url, path: url.pathname + url.search };
      }
      const text = await res.text();
      if (res.status !== 200) throw new Error(`provider refused the authorize request: ${res.status} ${text}`);
      const action = /<form method="post" action="([^"]+)"/.exec(text)![1].replace(/&amp;/g, "&");
      const form = new URLSearchParams();
      for (const m of text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
        form.set(m[1], m[2].replace(/&lt;/g, "<").replace(/&quot;/g, '"').replace(/&amp;/g, "&"));
      }
      const url = new URL(action);
      return { method: "POST", url, path: url.pathname + url.search, form };
    },
    signIdToken: (claims) => sign(claims),
    rotateKey: newKey,
    get jwksFetches() {
      return jwksFetches;
    },
    stop() {
      void server.stop(true);
    },
  };
}
