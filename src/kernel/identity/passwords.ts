/**
 * What a new password must be, for every realm: long enough (the realm's minimum: 8 for
 * console accounts, an App's setting for its users), at most 1,024 characters (argon2 hashes
 * whatever it is given: a megabyte password is a cost, not a security gain), and, where the
 * realm asks, not one of the most used passwords (NIST 800-63B). Only new passwords are
 * judged; sign-in verifies whatever was set. Hashing is core/password.ts.
 */
import { isCommonPassword } from "../../core/common-passwords";
import type { ErrorDetail } from "../../core/errors";

export const PASSWORD_MAX = 1024;

export interface PasswordPolicy {
  minLength: number;
  blockCommon: boolean;
}

/** Console accounts: 8 characters or more, common passwords allowed (their rule before the core). */
export const CONSOLE_PASSWORDS: PasswordPolicy = { minLength: 8, blockCommon: false };

/** Why `password` may not be set, as the field's error detail; null when it may. */
export function passwordProblem(password: string, policy: PasswordPolicy, field = "password"): ErrorDetail | null {
  if (password.length < policy.minLength) return { field, reason: `must be at least ${policy.minLength} characters` };
  if (password.length > PASSWORD_MAX) return { field, reason: `must be at most ${PASSWORD_MAX} characters` };
  if (policy.blockCommon && isCommonPassword(password)) return { field, reason: "is one of the 100,000 most used passwords; choose another" };
  return null;
}
