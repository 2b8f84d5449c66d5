/**
 * Secrets at rest: the master key, encryption of secrets that must be read back
 * (webhook signing secrets, TOTP seeds, DKIM keys), and hashing of high-entropy
 * tokens that only ever need to be compared (API keys, refresh tokens, codes).
 * Passwords are not handled here: they need a slow hash (argon2), these don't.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const KEY_BYTES = 32;
const IV_BYTES = 12; // the GCM standard nonce size
const TAG_BYTES = 16;
const TOKEN_VERSION = "v1";
const KEY_FILE = "master.key";

/** Where the key file lives when MASTER_KEY is unset (backup and restore copy it by name). */
export const masterKeyPath = (dataDir: string) => join(dataDir, KEY_FILE);

/** Parses a 32-byte key written as 64 hex characters, base64 or base64url. */
function parseKey(text: string, source: string): Uint8Array {
  const s = text.trim();
  let bytes: Buffer | null = null;
  // Hex first: 64 hex characters are also valid base64 (of 48 bytes), hex is what was meant.
  if (/^[0-9a-fA-F]{64}$/.test(s)) bytes = Buffer.from(s, "hex");
  else if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(s)) bytes = Buffer.from(s, "base64"); // Node's decoder takes both alphabets
  if (!bytes || bytes.length !== KEY_BYTES) {
    throw new Error(
      `${source} must be exactly ${KEY_BYTES} bytes, written as 64 hex characters or base64` +
        (bytes ? ` (got ${bytes.length} bytes)` : " (not hex or base64)"),
    );
  }
  return new Uint8Array(bytes);
}

/**
 * The master key: MASTER_KEY when set, otherwise `<dataDir>/master.key`, created on the
 * first start. Losing that file makes every encrypted secret unreadable: back it up.
 */
export function loadMasterKey(opts: { masterKey: string | null; dataDir: string }): Uint8Array {
  if (opts.masterKey) return parseKey(opts.masterKey, "MASTER_KEY");
  const path = masterKeyPath(opts.dataDir);
  try {
    return parseKey(readFileSync(path, "utf8"), path);
  } catch (err: any) {
    if (err?.code !== "ENOENT") throw err;
  }
  createKeyFile(opts.dataDir, path);
  // Read back rather than use what we generated: another process may have won the race.
  return parseKey(readFileSync(path, "utf8"), path);
}

/**
 * Writes a fresh key to a private temp file, then hard-links it into place. link() fails
 * if the name exists, so two processes starting together can't both install a key, and
 * nobody can ever read a half-written key file.
 */
function createKeyFile(dir: string, path: string) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const content = randomBytes(KEY_BYTES).toString("base64") + "\n";
  const tmp = join(dir, `.${KEY_FILE}.${process.pid}.${randomBytes(6).toString("hex")}`);
  writeFileSync(tmp, content, { flag: "wx", mode: 0o600 });
  chmodSync(tmp, 0o600); // the mode above is filtered by umask; make sure it is exactly 0600
  try {
    linkSync(tmp, path);
  } catch (err: any) {
    if (err?.code === "EEXIST") return; // someone else installed theirs first: use it
    // Filesystems without hard links: fall back to exclusive create of the final name.
    if (!["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV"].includes(err?.code)) throw err;
    try {
      writeFileSync(path, content, { flag: "wx", mode: 0o600 });
      chmodSync(path, 0o600);
    } catch (e: any) {
      if (e?.code !== "EEXIST") throw e;
    }
  } finally {
    unlinkSync(tmp);
  }
}

export interface SecretBox {
  encrypt(plain: string): string;
  decrypt(token: string): string;
}

/**
 * AES-256-GCM with a random 96-bit nonce per message. Output is `v1.<base64url(iv|ct|tag)>`;
 * the version prefix leaves room for key rotation or another cipher later.
 */
export function createSecretBox(key: Uint8Array): SecretBox {
  if (key.length !== KEY_BYTES) throw new Error(`secret box key must be ${KEY_BYTES} bytes`);
  return {
    encrypt(plain) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const ct = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return `${TOKEN_VERSION}.${Buffer.concat([iv, ct, cipher.getAuthTag()]).toString("base64url")}`;
    },
    decrypt(token) {
      const dot = token.indexOf(".");
      if (dot < 0 || token.slice(0, dot) !== TOKEN_VERSION) throw new Error("unsupported secret format");
      const raw = Buffer.from(token.slice(dot + 1), "base64url");
      if (raw.length < IV_BYTES + TAG_BYTES) throw new Error("secret is truncated");
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      try {
        return Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString("utf8");
      } catch {
        // GCM's own message is cryptic; this one says what it means in practice.
        throw new Error("secret could not be decrypted (tampered, or encrypted under another key)");
      }
    },
  };
}

/**
 * Independent 32-byte subkey per purpose (HKDF-SHA256, label as `info`), so a key used
 * for e.g. console JWTs never doubles as the encryption key, and leaking one reveals
 * nothing about the others.
 */
export function deriveKey(master: Uint8Array, label: string): Uint8Array {
  return new Uint8Array(hkdfSync("sha256", master, new Uint8Array(0), label, KEY_BYTES));
}

/**
 * A public fingerprint of the master key, stored with the database so a start with another
 * key is refused. HMAC under an HKDF subkey: it reveals nothing about the key itself.
 */
export function keyCheckValue(master: Uint8Array): string {
  return createHmac("sha256", deriveKey(master, "master-key-check")).update("bunker master key check v1").digest("hex");
}

/**
 * SHA-256 hex. Only for high-entropy tokens: no salt or stretching is needed for them.
 * Bun's one-shot hasher: the same digest as node:crypto's createHash, at a fifth of its cost
 * (0.24 µs against 1.1 µs here), and this runs on every request that carries a key.
 */
export function hashToken(token: string): string {
  return Bun.SHA256.hash(token, "hex") as string;
}

/**
 * Constant-time string comparison. Both sides are hashed first so the comparison is
 * always over 32 bytes: no early exit on a length mismatch, and the length itself only
 * shows in hashing time.
 */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(Bun.SHA256.hash(a) as Uint8Array, Bun.SHA256.hash(b) as Uint8Array);
}

/** Random URL-safe token: 32 bytes = 256 bits by default. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}
