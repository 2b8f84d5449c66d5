/**
 * Password sign-in, one rule for every realm (console accounts, App users):
 * - every failure is the same 401 INVALID_CREDENTIALS; an unknown identifier still pays for
 *   one argon2 verification against a dummy hash, so neither body nor timing tells whether
 *   it exists;
 * - the SigninGuard's throttles (core/signin-guard.ts): per submitted identifier (burst and
 *   lock, keyed purely by the identifier so unknown ones behave the same) and per client
 *   address across identifiers, checked before any lookup;
 * - only after the password is proven: a lock that landed through the owner's other
 *   identifier and a blocked owner still look invalid (401); suspended / deactivated answer 403.
 */
import { ApiError, invalidField } from "../../core/errors";
import type { Sql } from "../../core/db";
import type { SigninGuard } from "../../core/signin-guard";
import type { RequestMeta } from "../../access/http";
import type { AppContext } from "../../context";

export const invalidCredentials = () => new ApiError(401, "INVALID_CREDENTIALS", "Invalid credentials");

/** Identifiers (email or username) are matched trimmed and lower-cased. */
export const normaliseIdentifier = (s: string) => s.trim().toLowerCase();

/**
 * A proven credential of a suspended or deactivated owner answers 403, which says the owner
 * exists: callers reach it only after the proof, and handle "blocked" (their invalid answer) first.
 */
export function refuseInactive(status: string): void {
  if (status === "suspended") throw new ApiError(403, "ACCOUNT_SUSPENDED", "This account is suspended");
  if (status === "deactivated") throw new ApiError(403, "ACCOUNT_DEACTIVATED", "This account is deactivated");
}

export interface PasswordOwner {
  id: string;
  status: string;
  password_hash: string | null;
}

/** A realm's identifiers, throttles and audit vocabulary as password sign-in needs them. */
export interface PasswordRealm<O extends PasswordOwner> {
  guard: SigninGuard;
  byIdentifier(db: Sql, identifier: string): Promise<O | null>;
  /** The realm's audit entry of a wrong password; `owner` is null for an unknown identifier. */
  auditFailure(owner: O | null, meta: RequestMeta): Promise<void>;
}

/** The owner whose password this is, or the sign-in's 401 / 403 / 429. */
export async function provePassword<O extends PasswordOwner>(ctx: AppContext, realm: PasswordRealm<O>, b: { identifier: string; password: string }, meta: RequestMeta): Promise<O> {
  const id = normaliseIdentifier(b.identifier);
  if (!id) throw invalidField("identifier", "must not be empty");
  await realm.guard.admit(id, meta.ip);
  const owner = await realm.byIdentifier(ctx.db, id);
  const ok = await ctx.passwords.verifyOrDummy(b.password, owner?.password_hash);
  if (!ok || !owner) {
    await realm.guard.failed(id, owner?.id ?? null, meta.ip);
    await realm.auditFailure(owner, meta);
    throw invalidCredentials();
  }
  if ((await realm.guard.accountLocked(owner.id)) || owner.status === "blocked") throw invalidCredentials();
  refuseInactive(owner.status);
  await realm.guard.succeeded(id);
  return owner;
}
