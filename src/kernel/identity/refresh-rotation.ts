/**
 * Refresh-token rotation, one rule for every realm (console accounts, App users): only the
 * hash of a refresh token is stored; every refresh spends the presented token and stores the
 * next one in one transaction, and a spent token that comes back means someone holds a
 * copy, so the whole session is revoked. Tables stay per realm: the realm hands in its store.
 */
import { tx, type Sql } from "../../core/db";
import { hashToken } from "../../core/secrets";

export interface RefreshTokenStore {
  /** Marks an unspent token spent; falsy when it was spent already (a replay, or a racing refresh). */
  rotateRefreshToken(t: Sql, tokenHash: string, now: string): Promise<boolean | number>;
  insertRefreshToken(t: Sql, tokenHash: string, sessionId: string, now: string): Promise<unknown>;
  revokeSession(t: Sql, sessionId: string, now: string): Promise<unknown>;
}

/**
 * Spends `presented` and stores `next` for the session: true; or, when `presented` was spent
 * already, revokes the session (`onReuse` runs in that transaction too): false.
 */
export function rotateRefresh(db: Sql, store: RefreshTokenStore, r: { presented: string; next: string; sessionId: string; now: string }, onReuse?: (t: Sql) => Promise<void>): Promise<boolean> {
  return tx(db, async (t) => {
    if (!(await store.rotateRefreshToken(t, hashToken(r.presented), r.now))) {
      await store.revokeSession(t, r.sessionId, r.now);
      if (onReuse) await onReuse(t);
      return false;
    }
    await store.insertRefreshToken(t, hashToken(r.next), r.sessionId, r.now);
    return true;
  });
}
