/**
 * Webhook signing: the open Standard Webhooks scheme (webhook-id / webhook-timestamp /
 * webhook-signature) and the legacy per-product header (`t=<unix>,v1=<hex>`).
 *
 * Pure functions, called for every delivery attempt; no state, no clock (callers pass the
 * timestamp from the injected clock).
 *
 * Secrets:
 * - New endpoints: `whsec_` + base64(24 random bytes). The HMAC key is the decoded bytes.
 * - Pre-move (legacy) endpoints: a plain random string as stored. The HMAC key is the UTF-8
 *   bytes of that string, for both schemes. An open-scheme verifier therefore accepts it as
 *   `whsec_` + base64(stored string) (see asStandardSecret), and the legacy header is keyed
 *   "by the secret string as stored".
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const SECRET_PREFIX = "whsec_";
export const USER_AGENT = "Bunker-Webhooks/1.0";
/** Receivers reject timestamps further than this from their clock (both schemes). */
export const TIMESTAMP_TOLERANCE_SEC = 5 * 60;

/** A fresh Standard Webhooks secret: `whsec_` + base64 of 24 random bytes (32 characters). */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString("base64");
}

/** A pre-move style secret (legacy routes): 32 lowercase hex characters, used as stored. */
export function generateLegacySecret(): string {
  return randomBytes(16).toString("hex");
}

export function isStandardSecret(secret: string): boolean {
  return secret.startsWith(SECRET_PREFIX);
}

/** The HMAC key of a stored secret (see the module comment). */
export function secretKeyBytes(secret: string): Uint8Array {
  if (isStandardSecret(secret)) {
    const key = Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
    if (key.length === 0) throw new Error("webhook secret has an empty key");
    return key;
  }
  if (secret.length === 0) throw new Error("webhook secret is empty");
  return Buffer.from(secret, "utf8");
}

/** The `whsec_` form a Standard Webhooks verifier accepts for this stored secret. */
export function asStandardSecret(secret: string): string {
  if (isStandardSecret(secret)) return secret;
  return SECRET_PREFIX + Buffer.from(secret, "utf8").toString("base64");
}

function checkTimestamp(timestampSec: number): void {
  // Catches milliseconds passed by mistake (Date.now()) as well as fractions.
  if (!Number.isSafeInteger(timestampSec) || timestampSec < 0 || timestampSec > 1e11) {
    throw new Error(`webhook timestamp must be whole unix seconds, got ${timestampSec}`);
  }
}

/** `v1,<base64 HMAC-SHA256(key, "<msgId>.<timestampSec>.<body>")>` */
export function signStandard(secret: string, msgId: string, timestampSec: number, body: string): string {
  checkTimestamp(timestampSec);
  const mac = createHmac("sha256", secretKeyBytes(secret)).update(`${msgId}.${timestampSec}.${body}`, "utf8").digest("base64");
  return `v1,${mac}`;
}

/** The webhook-signature value: one `v1,...` per secret, space-separated, in the given order (current first). */
export function signatureHeader(secrets: string[], msgId: string, timestampSec: number, body: string): string {
  if (secrets.length === 0) throw new Error("no webhook secret to sign with");
  return secrets.map((s) => signStandard(s, msgId, timestampSec, body)).join(" ");
}

/** Legacy header value: `t=<ts>,v1=<hex HMAC-SHA256(stored secret string, "<ts>.<body>")>`. */
export function legacySignature(storedSecret: string, timestampSec: number, body: string): string {
  checkTimestamp(timestampSec);
  if (storedSecret.length === 0) throw new Error("webhook secret is empty");
  const mac = createHmac("sha256", Buffer.from(storedSecret, "utf8")).update(`${timestampSec}.${body}`, "utf8").digest("hex");
  return `t=${timestampSec},v1=${mac}`;
}

export interface DeliveryHeaderInput {
  msgId: string;
  timestampSec: number;
  body: string;
  /** Active secrets, current first (the previous one stays during a rotation grace period). */
  secrets: string[];
  /** Set for endpoints created through legacy routes (or before the move): header name and the current stored secret. */
  legacy?: { header: string; secret: string } | null;
}

/** Every header of one delivery POST. Header names are lowercase. */
export function deliveryHeaders(o: DeliveryHeaderInput): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": USER_AGENT,
    "webhook-id": o.msgId,
    "webhook-timestamp": String(o.timestampSec),
    "webhook-signature": signatureHeader(o.secrets, o.msgId, o.timestampSec, o.body),
  };
  if (o.legacy) headers[o.legacy.header.toLowerCase()] = legacySignature(o.legacy.secret, o.timestampSec, o.body);
  return headers;
}

function safeEqualText(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Receiver-side check of a webhook-signature value (used by tests, docs and self-checks):
 * true when any `v1,` entry matches any of the secrets and the timestamp is within tolerance.
 */
export function verifyStandard(
  secrets: string[],
  h: { msgId: string; timestampSec: number; signature: string },
  body: string,
  nowSec: number,
  toleranceSec = TIMESTAMP_TOLERANCE_SEC,
): boolean {
  if (!Number.isSafeInteger(h.timestampSec) || Math.abs(nowSec - h.timestampSec) > toleranceSec) return false;
  const passed = h.signature.split(" ").filter((v) => v.startsWith("v1,"));
  for (const secret of secrets) {
    const expected = signStandard(secret, h.msgId, h.timestampSec, body);
    if (passed.some((p) => safeEqualText(p, expected))) return true;
  }
  return false;
}

/** Receiver-side check of a legacy `t=<ts>,v1=<hex>` header value. */
export function verifyLegacy(
  storedSecret: string,
  headerValue: string,
  body: string,
  nowSec: number,
  toleranceSec = TIMESTAMP_TOLERANCE_SEC,
): boolean {
  const m = /^t=(\d{1,11}),v1=([0-9a-f]{64})$/.exec(headerValue.trim());
  if (!m) return false;
  const ts = Number(m[1]);
  if (Math.abs(nowSec - ts) > toleranceSec) return false;
  return safeEqualText(legacySignature(storedSecret, ts, body), `t=${ts},v1=${m[2]}`);
}
