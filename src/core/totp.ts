/**
 * The pure parts of TOTP second factors and recovery codes, shared by the Auth service's end
 * users (services/auth/identity/mfa.ts) and console accounts (services/platform/identity/mfa.ts). Storage,
 * encryption of the seed (secret box) and hashing of recovery codes (HMAC with a key derived
 * from the master key) stay with each service.
 *
 * TOTP: RFC 6238 with SHA-1, 6 digits, 30 s steps (what every authenticator app assumes); a
 * code of the previous, current or next step is accepted, and only for a step later than the
 * last one accepted for the factor, so a code never works twice. Seeds are 20 random bytes.
 *
 * Recovery codes: 16 lowercase hex characters (64 bits) as issued; hyphens anywhere and any
 * case are accepted when entered.
 */
import { randomBytes } from "node:crypto";
import { createTOTPKeyURI, generateHOTP } from "oslo/otp";
import { base32 } from "oslo/encoding";
import { safeEqual } from "./secrets";

export const TOTP_STEP_SEC = 30;
/** A 6-digit code as typed (after trim). */
export const TOTP_CODE_RE = /^\d{6}$/;

/** A fresh TOTP seed (20 random bytes, the RFC's recommended length for SHA-1). */
export const newTotpSeed = (): Buffer => randomBytes(20);

/** The seed as authenticator apps take it typed in: base32 without padding. */
export const totpSecretText = (seed: Uint8Array): string => base32.encode(seed, { includePadding: false });

/**
 * otpauth://totp/<issuer>:<account>?secret=...&issuer=... (Key URI format, for a QR code).
 * oslo writes the query with URLSearchParams, which encodes a space as "+"; the Key URI
 * format (and authenticator apps) expect %20, else "My App" shows up as "My+App". A real "+"
 * is already %2B there, so the swap is lossless.
 */
export const totpKeyUri = (issuer: string, account: string, seed: Uint8Array): string => createTOTPKeyURI(issuer, account, seed).replaceAll("+", "%20");

/**
 * The accepted time step for `code` at `nowMs`: the previous, current or next step, and only
 * one later than `lastStep` (the last step accepted for this factor); null when none matches.
 */
export async function matchTotpStep(seed: Uint8Array, code: string, nowMs: number, lastStep: number | null): Promise<number | null> {
  const now = Math.floor(nowMs / 1000 / TOTP_STEP_SEC);
  for (const step of [now - 1, now, now + 1]) {
    if (lastStep !== null && step <= lastStep) continue;
    if (safeEqual(await generateHOTP(seed, step), code)) return step;
  }
  return null;
}

/** The 6-digit code of `seed` at `nowMs` (tests and tools; the server only checks codes). */
export const totpCodeAt = (seed: Uint8Array, nowMs: number): Promise<string> => generateHOTP(seed, Math.floor(nowMs / 1000 / TOTP_STEP_SEC));

/** `n` fresh recovery codes (16 hex characters each), in clear: shown once, stored hashed. */
export const newRecoveryCodes = (n: number): string[] => Array.from({ length: n }, () => randomBytes(8).toString("hex"));

/** A recovery code as typed (hyphens anywhere, any case) -> its 16-hex canonical form, or null. */
export function normaliseRecoveryCode(raw: string) {
  const s = raw.replaceAll("-", "").trim().toLowerCase();
  return /^[0-9a-f]{16}$/.test(s) ? s : null;
}
