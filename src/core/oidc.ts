/**
 * OpenID Connect relying party shared by the platform console and Auth Apps.
 *
 * - Providers are configured by issuer URL, client id and client secret; everything else
 *   comes from discovery (`<issuer>/.well-known/openid-configuration`), whose `issuer` must
 *   equal the configured one (a trailing slash aside).
 * - Every call to a provider (discovery, JWKS, token endpoint) goes through the outbound
 *   HTTP client, so the SSRF guard applies: the issuer is user input for Apps.
 * - Discovery documents and key sets are cached per issuer / jwks_uri for an hour (by the
 *   injected clock); a token signed with an unknown `kid` re-fetches the key set once, at
 *   most every 30 s per jwks_uri, so a stream of forged kids cannot hammer the provider.
 * - ID tokens are verified with jose: signature (asymmetric algorithms only: no `none`, no
 *   HMAC with the client secret), `iss` = discovered issuer, `aud` contains the client id
 *   (and `azp` names us when there are several audiences), `exp`/`iat` with 60 s of clock
 *   skew. The nonce is compared by the caller, which knows which flow it is in.
 * - Web flows use the authorization code with PKCE (S256) and client_secret_basic, or
 *   client_secret_post when discovery says only that is supported.
 *
 * Provider ids and what each behaves like (docs/auth.md, "Federated sign-in"):
 *   idp_1  Apple-style: response_mode=form_post, a `user` JSON (name, email) posted on the
 *          first sign-in only (untrusted: display name only), native flow with a hashed nonce.
 *   idp_2  Google-style: code in the query string.
 *   idp_3  any standards-compliant OpenID provider, e.g. a self-hosted Keycloak.
 */
import { createHash } from "node:crypto";
import { createLocalJWKSet, errors as jose, jwtVerify, type JSONWebKeySet, type JWTPayload, type JWTVerifyGetKey } from "jose";
import { HOUR, MINUTE, SECOND, type Clock } from "./clock";
import { ApiError, invalidField, tooMany } from "./errors";
import { OutboundError, type OutboundHttp } from "./outbound-http";
import type { RateLimiter } from "./ratelimit";
import { hashToken, randomToken, safeEqual } from "./secrets";

export const PROVIDER_IDS = ["idp_1", "idp_2", "idp_3"] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];
export const isProviderId = (s: string): s is ProviderId => (PROVIDER_IDS as readonly string[]).includes(s);

export interface ProviderTraits {
  responseMode: "form_post" | "query";
  scope: string;
  /** Offers the native flow (id_token + raw nonce posted by a mobile app). */
  native: boolean;
}

export const PROVIDER_TRAITS: Record<ProviderId, ProviderTraits> = {
  idp_1: { responseMode: "form_post", scope: "openid email name", native: true },
  idp_2: { responseMode: "query", scope: "openid email profile", native: false },
  idp_3: { responseMode: "query", scope: "openid email profile", native: false },
};

export interface ProviderConfig {
  id: ProviderId;
  issuer: string;
  clientId: string;
  /** Read only when a code is exchanged (Apps keep it encrypted at rest). */
  clientSecret: () => string;
  /** More accepted `aud` values, e.g. the bundle id a native app signs in with. */
  extraAudiences?: string[];
}

export interface ProviderMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  token_endpoint_auth_methods_supported?: string[];
}

/** What a provider's redirect carries back to a callback (query or form). */
export interface CallbackInput {
  state?: string;
  code?: string;
  id_token?: string;
  /** idp_1, first sign-in: JSON {name, email}; untrusted, display name only. */
  user?: unknown;
  error?: string;
  error_description?: string;
}

/** A linked identity as the /me/identities routes show it (console and Apps alike). */
export function identityView(r: { id: string; provider: string; issuer: string; subject: string; email: string | null; created_at: string; last_used_at: string | null }) {
  return { id: r.id, provider: r.provider, issuer: r.issuer, subject: r.subject, email: r.email, created_at: r.created_at, last_used_at: r.last_used_at };
}

/** What a verified ID token says about the user. */
export interface IdTokenIdentity {
  issuer: string;
  subject: string;
  /** Lower-cased; null when absent or not an address. */
  email: string | null;
  /** Only `true` (or Apple's string "true") counts. */
  emailVerified: boolean;
  name: string | null;
  nonce: string | null;
  expiresAtMs: number;
}

/** Life of a web sign-in between start and callback. */
export const OAUTH_STATE_TTL_MS = 10 * MINUTE;
/** Web sign-ins a client address may start per minute (each writes a state row). */
export const OAUTH_STARTS_PER_MINUTE = 30;
export const CACHE_TTL_MS = HOUR;
export const JWKS_REFETCH_MIN_MS = 30 * SECOND;
export const CLOCK_SKEW_SEC = 60;
const MAX_CACHED = 256;
const MAX_TOKEN_CHARS = 16_384;
const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];
const EMAIL_RE = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/;

// --- errors ------------------------------------------------------------------------------

export const unknownProvider = (id: string) =>
  new ApiError(400, "UNKNOWN_OAUTH_PROVIDER", `OAuth provider "${id.slice(0, 40)}" is not configured`, [{ field: "provider", reason: "not a configured provider (idp_1, idp_2, idp_3)" }]);
export const idTokenRejected = (reason: string) => new ApiError(401, "INVALID_ID_TOKEN", `Provider token verification failed: ${reason}`);
export const nonceReplayed = () => new ApiError(401, "NONCE_REPLAYED", "This nonce was already used");
export const invalidState = () => new ApiError(400, "INVALID_OAUTH_STATE", "Unknown, expired or already used OAuth state: start the sign-in again");
export const providerMismatch = () => new ApiError(400, "OAUTH_PROVIDER_MISMATCH", "This OAuth state was issued for another provider");
export const providerError = (error: string) => new ApiError(400, "OAUTH_PROVIDER_ERROR", `The provider answered with an error: ${error.slice(0, 64)}`);
const upstream = (issuer: string, what: string) => new ApiError(502, "UPSTREAM_ERROR", `OpenID provider ${issuer}: ${what}`);

/** Counts a web sign-in start against `key` (a client address): 429 RATE_LIMITED beyond the limit. */
export async function limitStarts(ratelimit: RateLimiter, key: string): Promise<void> {
  const hit = await ratelimit.hit(key, OAUTH_STARTS_PER_MINUTE, MINUTE);
  if (!hit.allowed) throw tooMany("Too many sign-in attempts from this address; try again shortly", Math.max(1, Math.ceil(hit.retryAfterMs / 1000)), "RATE_LIMITED");
}

// --- nonces and PKCE ---------------------------------------------------------------------

/** SHA-256 of a nonce as lowercase hex: what is stored, and what a native idp_1 client sends the provider. */
export const hashNonce = (raw: string) => createHash("sha256").update(raw, "utf8").digest("hex");

/** How a state is looked up at the callback (it is a 256-bit random value: a plain hash suffices). */
export const hashState = (state: string) => hashToken(state);

/** A fresh random value for state, nonce or PKCE verifier: 32 bytes, base64url (43 chars). */
export const randomOAuthValue = () => randomToken(32);

export function pkcePair() {
  const verifier = randomOAuthValue();
  return { verifier, challenge: createHash("sha256").update(verifier, "ascii").digest("base64url") };
}

export const NATIVE_NONCE = { minHex: 64, minOther: 43, max: 512, minDistinct: 10 };

/**
 * A raw native-flow nonce must carry at least 32 bytes of entropy. A string cannot prove
 * that, so the rule is on its shape: URL-safe characters ([A-Za-z0-9._~-]); 64+ characters
 * when it is all hex digits (4 bits each), else 43+ (base64url, 6 bits each); at least 10
 * distinct characters (a random value of that length has far more). 400 otherwise.
 */
export function checkNativeNonce(raw: unknown): string {
  const bad = (reason: string) => invalidField("nonce", reason);
  if (typeof raw !== "string" || !raw) throw bad("is required");
  if (raw.length > NATIVE_NONCE.max) throw bad(`at most ${NATIVE_NONCE.max} characters`);
  if (!/^[A-Za-z0-9._~-]+$/.test(raw)) throw bad("must use URL-safe characters only (A-Z a-z 0-9 . _ ~ -)");
  const min = /^[0-9a-fA-F]+$/.test(raw) ? NATIVE_NONCE.minHex : NATIVE_NONCE.minOther;
  if (raw.length < min) throw bad(`needs at least 32 bytes of entropy: ${min}+ characters (64 hex or 43 base64url)`);
  if (new Set(raw).size < NATIVE_NONCE.minDistinct) throw bad("does not look random");
  return raw;
}

/** Display name from idp_1's first-sign-in `user` JSON ({name: {firstName, lastName}} or {name: "..."}); anything else is ignored. */
export function displayNameFromUserJson(raw: unknown): string | null {
  let v = raw;
  if (typeof v === "string") {
    if (v.length > 4096) return null;
    try {
      v = JSON.parse(v);
    } catch {
      return null;
    }
  }
  if (!v || typeof v !== "object") return null;
  const name = (v as { name?: unknown }).name;
  let out = "";
  if (typeof name === "string") out = name;
  else if (name && typeof name === "object") {
    const n = name as { firstName?: unknown; lastName?: unknown };
    out = [n.firstName, n.lastName].filter((x) => typeof x === "string").join(" ");
  }
  out = out.replace(/[\x00-\x1f\x7f]/g, "").trim().slice(0, 200);
  return out || null;
}

// --- the client --------------------------------------------------------------------------

function setBounded<K, V>(m: Map<K, V>, k: K, v: V) {
  m.delete(k);
  m.set(k, v);
  // Oldest first: a Map iterates in insertion order.
  while (m.size > MAX_CACHED) m.delete(m.keys().next().value as K);
}

function parseJson(body: Uint8Array): any {
  try {
    return JSON.parse(new TextDecoder().decode(body));
  } catch {
    return undefined;
  }
}

const trimSlash = (s: string) => s.replace(/\/+$/, "");

function claimString(v: unknown, max = 320): string | null {
  return typeof v === "string" && v.length > 0 && v.length <= max ? v : null;
}

export class OidcClient {
  private metadata = new Map<string, { doc: ProviderMetadata; at: number }>();
  private keySets = new Map<string, { get: JWTVerifyGetKey; at: number }>();
  private inflight = new Map<string, Promise<unknown>>();

  constructor(
    private readonly http: OutboundHttp,
    private readonly clock: Clock,
  ) {}

  /** One request at a time per key: concurrent sign-ins share a discovery or JWKS fetch. */
  private once<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const running = this.inflight.get(key) as Promise<T> | undefined;
    if (running) return running;
    const p = fn().finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
    return p;
  }

  /** GET/POST through the SSRF guard; a refused or failed call is the provider's problem (502). */
  private async call(issuer: string, url: string, init: Parameters<OutboundHttp["request"]>[1] = {}) {
    try {
      return await this.http.request(url, { timeoutMs: 10_000, ...init });
    } catch (e) {
      if (e instanceof OutboundError) throw upstream(issuer, e.kind === "blocked" || e.kind === "invalid_url" ? `URL refused (${e.message})` : e.message);
      throw e;
    }
  }

  async discover(issuer: string): Promise<ProviderMetadata> {
    const hit = this.metadata.get(issuer);
    if (hit && this.clock.nowMs() - hit.at < CACHE_TTL_MS) return hit.doc;
    return this.once(`discovery ${issuer}`, async () => {
      const res = await this.call(issuer, `${trimSlash(issuer)}/.well-known/openid-configuration`, { headers: { accept: "application/json" } });
      if (res.status !== 200) throw upstream(issuer, `discovery answered HTTP ${res.status}`);
      const doc = parseJson(res.body);
      if (!doc || typeof doc !== "object") throw upstream(issuer, "discovery document is not JSON");
      if (typeof doc.issuer !== "string" || trimSlash(doc.issuer) !== trimSlash(issuer)) throw upstream(issuer, "discovery names another issuer");
      for (const k of ["authorization_endpoint", "token_endpoint", "jwks_uri"] as const) {
        if (typeof doc[k] !== "string") throw upstream(issuer, `discovery lacks ${k}`);
        let u: URL;
        try {
          u = new URL(doc[k]);
        } catch {
          throw upstream(issuer, `${k} is not a URL`);
        }
        if (u.protocol !== "https:" && u.protocol !== "http:") throw upstream(issuer, `${k} is not an http(s) URL`);
      }
      const meta: ProviderMetadata = {
        issuer: doc.issuer,
        authorization_endpoint: doc.authorization_endpoint,
        token_endpoint: doc.token_endpoint,
        jwks_uri: doc.jwks_uri,
        token_endpoint_auth_methods_supported: Array.isArray(doc.token_endpoint_auth_methods_supported) ? doc.token_endpoint_auth_methods_supported.filter((x: unknown) => typeof x === "string") : undefined,
      };
      setBounded(this.metadata, issuer, { doc: meta, at: this.clock.nowMs() });
      return meta;
    });
  }

  private async keys(issuer: string, uri: string, refresh: boolean): Promise<JWTVerifyGetKey> {
    const hit = this.keySets.get(uri);
    if (!refresh && hit && this.clock.nowMs() - hit.at < CACHE_TTL_MS) return hit.get;
    return this.once(`jwks ${uri}`, async () => {
      const res = await this.call(issuer, uri, { headers: { accept: "application/json" } });
      if (res.status !== 200) throw upstream(issuer, `JWKS answered HTTP ${res.status}`);
      const set = parseJson(res.body) as JSONWebKeySet | undefined;
      if (!set || !Array.isArray(set.keys)) throw upstream(issuer, "JWKS is not a key set");
      let get: JWTVerifyGetKey;
      try {
        get = createLocalJWKSet(set);
      } catch {
        throw upstream(issuer, "JWKS is not a key set");
      }
      setBounded(this.keySets, uri, { get, at: this.clock.nowMs() });
      return get;
    });
  }

  private mayRefetch(uri: string) {
    const hit = this.keySets.get(uri);
    return !hit || this.clock.nowMs() - hit.at >= JWKS_REFETCH_MIN_MS;
  }

  /** The provider's authorize URL for a web sign-in (code flow, PKCE S256, state and nonce). */
  async authorizationUrl(p: ProviderConfig, a: { redirectUri: string; state: string; nonce: string; codeChallenge: string }): Promise<string> {
    const meta = await this.discover(p.issuer);
    const traits = PROVIDER_TRAITS[p.id];
    const u = new URL(meta.authorization_endpoint);
    const q = u.searchParams;
    q.set("response_type", "code");
    q.set("client_id", p.clientId);
    q.set("redirect_uri", a.redirectUri);
    q.set("scope", traits.scope);
    q.set("state", a.state);
    q.set("nonce", a.nonce);
    q.set("code_challenge", a.codeChallenge);
    q.set("code_challenge_method", "S256");
    if (traits.responseMode === "form_post") q.set("response_mode", "form_post");
    return u.href;
  }

  /** Trades an authorization code for the provider's ID token (not yet verified). */
  async exchangeCode(p: ProviderConfig, a: { code: string; redirectUri: string; codeVerifier: string }): Promise<string> {
    const meta = await this.discover(p.issuer);
    const form = new URLSearchParams({ grant_type: "authorization_code", code: a.code, redirect_uri: a.redirectUri, code_verifier: a.codeVerifier });
    const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", accept: "application/json" };
    const methods = meta.token_endpoint_auth_methods_supported ?? ["client_secret_basic"];
    if (methods.includes("client_secret_basic") || !methods.includes("client_secret_post")) {
      // RFC 6749 §2.3.1: both halves form-urlencoded before base64.
      const enc = (s: string) => new URLSearchParams({ x: s }).toString().slice(2);
      headers.authorization = `Basic ${Buffer.from(`${enc(p.clientId)}:${enc(p.clientSecret())}`).toString("base64")}`;
    } else {
      form.set("client_id", p.clientId);
      form.set("client_secret", p.clientSecret());
    }
    const res = await this.call(p.issuer, meta.token_endpoint, { method: "POST", headers, body: form.toString() });
    const body = parseJson(res.body);
    if (res.status === 200 && body && typeof body.id_token === "string") return body.id_token;
    if (res.status === 200) throw idTokenRejected("the token endpoint returned no id_token");
    if (res.status >= 400 && res.status < 500) {
      const err = body && typeof body.error === "string" ? body.error.slice(0, 64) : `HTTP ${res.status}`;
      throw new ApiError(401, "OAUTH_CODE_REJECTED", `The provider refused the authorization code (${err})`);
    }
    throw upstream(p.issuer, `token endpoint answered HTTP ${res.status}`);
  }

  /**
   * First half of a web sign-in: fresh state, nonce and PKCE verifier, and the provider URL
   * to send the browser to. `record` is what the caller stores until the callback (each
   * service in its own table): only hashes of state and nonce, the verifier sealed by
   * `seal` (encryption with the master key), and the 10-minute expiry.
   */
  async beginWebFlow(p: ProviderConfig, redirectUri: string, returnTo: string, seal: (plain: string) => string) {
    const state = randomOAuthValue();
    const nonce = randomOAuthValue();
    const pkce = pkcePair();
    const url = await this.authorizationUrl(p, { redirectUri, state, nonce, codeChallenge: pkce.challenge });
    const record = {
      state_hash: hashState(state),
      provider: p.id,
      nonce_hash: hashNonce(nonce),
      code_verifier_enc: seal(pkce.verifier),
      return_to: returnTo,
      created_at: this.clock.iso(),
      expires_at: this.clock.nowMs() + OAUTH_STATE_TTL_MS,
    };
    return { url, record };
  }

  /**
   * Second half, after the caller consumed the state: the ID token from the code exchange
   * (or posted directly, as idp_1 may), verified, and bound to the state's nonce. A nonce
   * that a finished sign-in already used is 401 NONCE_REPLAYED; any other mismatch is
   * 401 INVALID_ID_TOKEN.
   */
  async completeWebFlow(
    p: ProviderConfig,
    a: { redirectUri: string; codeVerifier: string; nonceHash: string; code?: string | null; idToken?: string | null; nonceUsed: (nonceHash: string) => boolean | Promise<boolean> },
  ): Promise<IdTokenIdentity> {
    const token = a.code ? await this.exchangeCode(p, { code: a.code, redirectUri: a.redirectUri, codeVerifier: a.codeVerifier }) : a.idToken;
    const who = await this.verifyIdToken(p, token);
    if (!who.nonce) throw idTokenRejected("the token carries no nonce");
    const got = hashNonce(who.nonce);
    if (!safeEqual(got, a.nonceHash)) {
      if (await a.nonceUsed(got)) throw nonceReplayed();
      throw idTokenRejected("the nonce does not belong to this sign-in");
    }
    return who;
  }

  /** Verifies an ID token of the provider; the caller checks the nonce. 401 INVALID_ID_TOKEN on any failure. */
  async verifyIdToken(p: ProviderConfig, token: unknown): Promise<IdTokenIdentity> {
    if (typeof token !== "string" || token.length > MAX_TOKEN_CHARS || token.split(".").length !== 3) throw idTokenRejected("not a signed JWT");
    const meta = await this.discover(p.issuer);
    const audience = [p.clientId, ...(p.extraAudiences ?? [])];
    const verify = (getKey: JWTVerifyGetKey) =>
      jwtVerify(token, getKey, {
        issuer: meta.issuer,
        audience,
        algorithms: ALGORITHMS,
        currentDate: this.clock.now(),
        clockTolerance: CLOCK_SKEW_SEC,
        requiredClaims: ["iss", "sub", "aud", "exp", "iat"],
      });
    let payload: JWTPayload;
    try {
      try {
        payload = (await verify(await this.keys(p.issuer, meta.jwks_uri, false))).payload;
      } catch (e) {
        // A key the cached set lacks may be a rotation at the provider: look once more.
        if (!(e instanceof jose.JWKSNoMatchingKey) || !this.mayRefetch(meta.jwks_uri)) throw e;
        payload = (await verify(await this.keys(p.issuer, meta.jwks_uri, true))).payload;
      }
    } catch (e) {
      throw joseFailure(e);
    }
    const iat = payload.iat!;
    if (iat * 1000 > this.clock.nowMs() + CLOCK_SKEW_SEC * SECOND) throw idTokenRejected("issued in the future");
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && !audience.includes(String(payload.azp))) throw idTokenRejected("azp does not name this client");
    const subject = claimString(payload.sub, 255);
    if (!subject) throw idTokenRejected("no usable subject");
    const rawEmail = claimString(payload.email)?.trim().toLowerCase() ?? null;
    const email = rawEmail && EMAIL_RE.test(rawEmail) && rawEmail.length <= 254 ? rawEmail : null;
    const verified = payload.email_verified === true || payload.email_verified === "true";
    const given = [claimString(payload.given_name, 100), claimString(payload.family_name, 100)].filter(Boolean).join(" ");
    const name = (claimString(payload.name, 200) ?? (given || null))?.replace(/[\x00-\x1f\x7f]/g, "").trim() || null;
    return {
      issuer: meta.issuer,
      subject,
      email,
      emailVerified: !!email && verified,
      name,
      nonce: claimString(payload.nonce, 1024),
      expiresAtMs: payload.exp! * 1000,
    };
  }
}

/** jose's failure -> 401 with a reason a developer can act on (no secrets in it). */
function joseFailure(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  if (e instanceof jose.JWTExpired) return idTokenRejected("the token has expired");
  if (e instanceof jose.JWTClaimValidationFailed) return idTokenRejected(`"${e.claim}" claim ${e.reason === "check_failed" ? "is not acceptable" : e.reason.replaceAll("_", " ")}`);
  if (e instanceof jose.JWKSNoMatchingKey) return idTokenRejected("signed with a key the provider does not publish");
  if (e instanceof jose.JWSSignatureVerificationFailed) return idTokenRejected("signature does not verify");
  if (e instanceof jose.JOSEAlgNotAllowed || e instanceof jose.JOSENotSupported) return idTokenRejected("signing algorithm not accepted");
  if (e instanceof jose.JOSEError) return idTokenRejected("malformed token");
  return idTokenRejected("could not be verified");
}
