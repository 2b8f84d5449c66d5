/**
 * Starting a session once a credential is proven, one rule for every realm (console
 * accounts, App users): the realm signs the access and refresh tokens (its own claims and
 * keys); the session row and the refresh token's hash (never the token) are stored in one
 * transaction, with what the realm records beside them (audit entry, event), so a session
 * exists exactly when its record does; the answer is the one token response both realms give.
 */
import { tx, type Sql } from "../../core/db";
import { hashToken } from "../../core/secrets";

export interface TokenResponse {
  access_token: string;
  refresh_token: string;
  token_type: "Bearer";
  expires_in: number;
}

/** A realm's session tables (the refresh-token part is the one rotateRefresh uses). */
export interface SessionRows<S> {
  insertSession(t: Sql, session: S): Promise<unknown>;
  insertRefreshToken(t: Sql, tokenHash: string, sessionId: string, now: string): Promise<unknown>;
}

/** Stores `session` with its refresh token (and `within`, in the same transaction); the token response. */
export async function openSession<S extends { id: string; created_at: string }>(
  db: Sql,
  rows: SessionRows<S>,
  session: S,
  tokens: { access: string; refresh: string; expiresIn: number },
  within?: (t: Sql) => Promise<void>,
): Promise<TokenResponse> {
  await tx(db, async (t) => {
    await rows.insertSession(t, session);
    await rows.insertRefreshToken(t, hashToken(tokens.refresh), session.id, session.created_at);
    if (within) await within(t);
  });
  return { access_token: tokens.access, refresh_token: tokens.refresh, token_type: "Bearer", expires_in: tokens.expiresIn };
}
