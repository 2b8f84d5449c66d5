/**
 * Per-App RS256 signing keys and the App's JWTs.
 *
 * - Each App gets a 2048-bit RSA key pair at creation; the private key is stored as PKCS#8
 *   encrypted with the master key, the public half as a JWK.
 * - Rotation: the new key signs from now on; the old one is retired but stays in the JWKS
 *   until every token it signed has expired (its drop_after = now + the App's access-token
 *   lifetime + clock skew). A verifier that sees an unknown kid re-fetches the JWKS.
 * - Verification is offline (signature, issuer, expiry, type) with a bounded cache of
 *   tokens already verified, so the hot path (/verify, /oauth/introspect, bearer routes)
 *   does no RSA work for a token it has seen.
 * - The signing key and the public keys of each App are cached in-process; rotation and the
 *   purge move KEYS_TOPIC (core/cache-bus.ts), which empties those caches on every node, and
 *   with several nodes they are also emptied every CACHE_TTL_MS (a missed notification).
 *   A verified token needs no invalidation: its key is dropped only after it expired.
 */
import { SignJWT, exportJWK, exportPKCS8, generateKeyPair, importPKCS8, importJWK, jwtVerify, decodeProtectedHeader, type JWTPayload } from "jose";
import { tx } from "../../../core/db";
import { randomToken } from "../../../core/secrets";
import type { AppContext } from "../../../context";
import type { MaybePromise } from "../../../core/maybe-promise";
import * as store from "./store";

/** Leeway after a retired key's last token expires before it leaves the JWKS. */
export const KEY_DROP_SKEW_MS = 5 * 60_000;
const VERIFIED_CACHE_MAX = 20_000;
export const KEYS_TOPIC = "auth.keys";

export interface Jwk {
  kid: string;
  kty: "RSA";
  alg: "RS256";
  use: "sig";
  n: string;
  e: string;
}

type Signer = { kid: string; key: CryptoKey };

export class SigningKeys {
  private signers = new Map<string, Signer>();
  private publicKeys = new Map<string, CryptoKey>();
  private verified = new Map<string, JWTPayload>();
  private keysGen = -1;
  private keysClearedAt = 0;

  constructor(private readonly ctx: AppContext) {}

  /** Empties the key caches when KEYS_TOPIC moved (or, with several nodes, when they are older than maxAgeMs). */
  private fresh() {
    const gen = this.ctx.caches.generation(KEYS_TOPIC);
    const maxAge = this.ctx.caches.maxAgeMs;
    const now = maxAge === Number.POSITIVE_INFINITY ? 0 : this.ctx.clock.nowMs();
    if (gen !== this.keysGen || now - this.keysClearedAt >= maxAge) {
      this.signers.clear();
      this.publicKeys.clear();
      this.keysGen = gen;
      this.keysClearedAt = now;
    }
    return gen;
  }

  /** Generates and stores a fresh key pair; the caller's transaction decides when it becomes visible. */
  async generate(appId: string) {
    const { publicKey, privateKey } = await generateKeyPair("RS256", { modulusLength: 2048, extractable: true });
    const kid = `key_${randomToken(12)}`;
    const pub = await exportJWK(publicKey);
    const pem = await exportPKCS8(privateKey);
    return {
      row: {
        kid,
        app_id: appId,
        public_jwk: JSON.stringify({ kid, kty: "RSA", alg: "RS256", use: "sig", n: pub.n, e: pub.e }),
        private_enc: this.ctx.secretBox.encrypt(pem),
        created_at: this.ctx.clock.iso(),
        retired_at: null,
        drop_after: null,
      } satisfies store.SigningKeyRow,
      signer: { kid, key: privateKey } as Signer,
    };
  }

  /** Retires the signing key and installs a new one; returns the new kid. */
  async rotate(appId: string, accessTtlSec: number) {
    const { row, signer } = await this.generate(appId);
    await tx(this.ctx.db, async (t) => {
      await store.retireSigningKeys(t, appId, this.ctx.clock.iso(), this.ctx.clock.nowMs() + accessTtlSec * 1000 + KEY_DROP_SKEW_MS);
      await store.insertSigningKey(t, row);
      await this.ctx.caches.changed(t, KEYS_TOPIC);
    });
    this.fresh();
    this.signers.set(appId, signer);
    return row.kid;
  }

  forget(appId: string) {
    this.signers.delete(appId);
  }

  private async signer(appId: string): Promise<Signer> {
    const gen = this.fresh();
    const hit = this.signers.get(appId);
    if (hit) return hit;
    const row = await store.activeSigningKey(this.ctx.db, appId);
    if (!row) throw new Error(`App ${appId} has no signing key`);
    const key = (await importPKCS8(this.ctx.secretBox.decrypt(row.private_enc), "RS256")) as CryptoKey;
    const s = { kid: row.kid, key };
    // Not kept when a rotation landed while it was read: the row may be the retired key.
    if (this.ctx.caches.generation(KEYS_TOPIC) === gen) this.signers.set(appId, s);
    return s;
  }

  async jwks(appId: string): Promise<{ keys: Jwk[] }> {
    return { keys: (await store.publishedKeys(this.ctx.db, appId, this.ctx.clock.nowMs())).map((k) => JSON.parse(k.public_jwk) as Jwk) };
  }

  async sign(appId: string, claims: Record<string, unknown>, opts: { issuer: string; audience?: string | null; ttlSec: number; typ?: string }) {
    const s = await this.signer(appId);
    const iat = Math.floor(this.ctx.clock.nowMs() / 1000);
    const jwt = new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: s.kid, typ: opts.typ ?? "JWT" })
      .setIssuer(opts.issuer)
      .setIssuedAt(iat)
      .setExpirationTime(iat + opts.ttlSec)
      .setJti(randomToken(16));
    if (opts.audience) jwt.setAudience(opts.audience);
    return jwt.sign(s.key);
  }

  private async publicKey(appId: string, kid: string): Promise<CryptoKey | null> {
    const cacheKey = `${appId}:${kid}`;
    this.fresh();
    const hit = this.publicKeys.get(cacheKey);
    if (hit) return hit;
    const row = (await store.publishedKeys(this.ctx.db, appId, this.ctx.clock.nowMs())).find((k) => k.kid === kid);
    if (!row) return null;
    const key = (await importJWK(JSON.parse(row.public_jwk), "RS256")) as CryptoKey;
    this.publicKeys.set(cacheKey, key);
    return key;
  }

  /**
   * Verifies a token of this App: RS256 signature by one of its published keys, issuer,
   * expiry (injected clock). Returns the payload or null. Callers check the token type.
   * A token already verified is answered at once, without a promise (maybe-promise.ts).
   */
  verify(appId: string, issuer: string, token: string): MaybePromise<JWTPayload | null> {
    const now = this.ctx.clock.nowMs();
    const hit = this.verified.get(token);
    if (hit) return hit.iss === issuer && (hit.exp ?? 0) * 1000 > now ? hit : null;
    return this.verifyFresh(appId, issuer, token, now);
  }

  private async verifyFresh(appId: string, issuer: string, token: string, now: number): Promise<JWTPayload | null> {
    let kid: string | undefined;
    try {
      const h = decodeProtectedHeader(token);
      if (h.alg !== "RS256") return null;
      kid = h.kid;
    } catch {
      return null;
    }
    if (!kid) return null;
    const key = await this.publicKey(appId, kid);
    if (!key) return null;
    try {
      const { payload } = await jwtVerify(token, key, { issuer, algorithms: ["RS256"], currentDate: new Date(now) });
      if (this.verified.size >= VERIFIED_CACHE_MAX) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, payload);
      return payload;
    } catch {
      return null;
    }
  }

  /** Drops keys past their drop_after (scheduled). */
  async purge(): Promise<number> {
    const n = await store.purgeDroppedKeys(this.ctx.db, this.ctx.clock.nowMs());
    if (n) await this.ctx.caches.changed(this.ctx.db, KEYS_TOPIC);
    return n;
  }
}
