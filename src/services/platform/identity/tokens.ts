/**
 * Console session tokens: short-lived access JWTs and rotating refresh JWTs (HS256 with
 * a key derived from the master key). The session row stays the authority: logout and
 * reset revoke it, so a verified JWT still needs a live session (checked by authz).
 */
import { SignJWT, jwtVerify } from "jose";
import type { Clock } from "../../../core/clock";
import { randomToken } from "../../../core/secrets";

export interface AccessClaims {
  sub: string;
  sid: string;
  exp: number;
}

const CACHE_MAX = 10_000;

export class SessionTokens {
  // Verified access tokens -> claims. HMAC verification through WebCrypto is async and
  // costs more than the session lookup; a bounded cache keeps the hot path to one query.
  private verified = new Map<string, AccessClaims>();

  constructor(
    private readonly key: Uint8Array,
    private readonly issuer: string,
    private readonly clock: Clock,
  ) {}

  private async sign(claims: Record<string, unknown>, expSec: number) {
    const nowSec = Math.floor(this.clock.nowMs() / 1000);
    return new SignJWT(claims).setProtectedHeader({ alg: "HS256", typ: "JWT" }).setIssuer(this.issuer).setIssuedAt(nowSec).setExpirationTime(expSec).sign(this.key);
  }

  access(accountId: string, sessionId: string, expSec: number) {
    return this.sign({ sub: accountId, sid: sessionId, typ: "access" }, expSec);
  }

  /** Refresh tokens carry a random jti so each is unique; only their hash is stored. */
  refresh(accountId: string, sessionId: string, expSec: number) {
    return this.sign({ sub: accountId, sid: sessionId, typ: "refresh", jti: randomToken(24) }, expSec);
  }

  private async verify(token: string, typ: "access" | "refresh") {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        issuer: this.issuer,
        algorithms: ["HS256"],
        currentDate: this.clock.now(),
      });
      if (payload.typ !== typ || typeof payload.sub !== "string" || typeof payload.sid !== "string" || typeof payload.exp !== "number") return null;
      return { sub: payload.sub, sid: payload.sid, exp: payload.exp } as AccessClaims;
    } catch {
      return null;
    }
  }

  async verifyAccess(token: string): Promise<AccessClaims | null> {
    const hit = this.verified.get(token);
    if (hit) return hit.exp * 1000 > this.clock.nowMs() ? hit : null;
    const claims = await this.verify(token, "access");
    if (claims) {
      if (this.verified.size >= CACHE_MAX) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, claims);
    }
    return claims;
  }

  verifyRefresh(token: string) {
    return this.verify(token, "refresh");
  }
}
