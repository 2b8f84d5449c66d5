import { describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSecretBox, deriveKey, hashToken, loadMasterKey, randomToken, safeEqual } from "../../src/core/secrets";

const tempDir = () => mkdtempSync(join(tmpdir(), "bunker-secrets-"));
const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

describe("loadMasterKey", () => {
  test("creates <dataDir>/master.key with mode 0600 on first call and reuses it", () => {
    const dataDir = join(tempDir(), "nested", "data"); // folders don't exist yet
    const first = loadMasterKey({ masterKey: null, dataDir });
    expect(first.length).toBe(32);
    const file = join(dataDir, "master.key");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(file, "utf8").trim(), "base64")).toEqual(Buffer.from(first));
    expect(readdirSync(dataDir)).toEqual(["master.key"]); // no temp file left behind

    const second = loadMasterKey({ masterKey: null, dataDir });
    expect(Buffer.from(second)).toEqual(Buffer.from(first));
  });

  test("processes starting together on an empty data dir all end up with the same key", async () => {
    const dataDir = tempDir();
    const mod = join(import.meta.dir, "../../src/core/secrets.ts");
    const script = `const { loadMasterKey } = await import(${JSON.stringify(mod)});
      process.stdout.write(Buffer.from(loadMasterKey({ masterKey: null, dataDir: ${JSON.stringify(dataDir)} })).toString("hex"));`;
    const procs = Array.from({ length: 6 }, () => Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" }));
    const keys = await Promise.all(procs.map(async (p) => {
      expect(await p.exited).toBe(0);
      return new Response(p.stdout).text();
    }));
    expect(keys[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(keys).size).toBe(1);
    expect(Buffer.from(readFileSync(join(dataDir, "master.key"), "utf8").trim(), "base64").toString("hex")).toBe(keys[0]);
  });

  test("different data dirs get different random keys", () => {
    const a = loadMasterKey({ masterKey: null, dataDir: tempDir() });
    const b = loadMasterKey({ masterKey: null, dataDir: tempDir() });
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false);
  });

  test("MASTER_KEY as 64 hex characters", () => {
    const key = loadMasterKey({ masterKey: "ab".repeat(32), dataDir: tempDir() });
    expect(Buffer.from(key)).toEqual(Buffer.alloc(32, 0xab));
  });

  test("MASTER_KEY as base64 and base64url, and it never writes a key file", () => {
    const raw = Buffer.alloc(32, 0xfb); // 0xfb bytes encode with '+' '/' vs '-' '_'
    const dataDir = tempDir();
    expect(Buffer.from(loadMasterKey({ masterKey: raw.toString("base64"), dataDir }))).toEqual(raw);
    expect(Buffer.from(loadMasterKey({ masterKey: raw.toString("base64url"), dataDir }))).toEqual(raw);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  test("rejects keys of the wrong length", () => {
    const dataDir = tempDir();
    expect(() => loadMasterKey({ masterKey: "ab".repeat(31), dataDir })).toThrow(/32 bytes/); // 31 bytes of hex-as-base64
    expect(() => loadMasterKey({ masterKey: Buffer.alloc(31).toString("base64"), dataDir })).toThrow(/got 31 bytes/);
    expect(() => loadMasterKey({ masterKey: Buffer.alloc(33).toString("base64"), dataDir })).toThrow(/got 33 bytes/);
    expect(() => loadMasterKey({ masterKey: "not a key!", dataDir })).toThrow(/MASTER_KEY/);
  });

  test("rejects a corrupt key file instead of replacing it", () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, "master.key"), Buffer.alloc(16).toString("base64"));
    expect(() => loadMasterKey({ masterKey: null, dataDir })).toThrow(/master\.key must be exactly 32 bytes/);
    expect(readFileSync(join(dataDir, "master.key"), "utf8")).toBe(Buffer.alloc(16).toString("base64"));
  });
});

describe("createSecretBox", () => {
  const box = createSecretBox(bytes(32, 1));

  test("round trip, with a fresh IV each time", () => {
    const plain = "whsec_ünïcødé 🔐";
    const a = box.encrypt(plain);
    const b = box.encrypt(plain);
    expect(a).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
    expect(a).not.toBe(b);
    expect(box.decrypt(a)).toBe(plain);
    expect(box.decrypt(b)).toBe(plain);
    expect(box.decrypt(box.encrypt(""))).toBe("");
  });

  test("any flipped byte is detected", () => {
    const token = box.encrypt("secret value");
    const raw = Buffer.from(token.slice(3), "base64url");
    for (const i of [0, 12, raw.length - 1]) { // IV, ciphertext, tag
      const bad = Buffer.from(raw);
      bad[i] ^= 1;
      expect(() => box.decrypt(`v1.${bad.toString("base64url")}`)).toThrow(/could not be decrypted/);
    }
  });

  test("another key cannot decrypt", () => {
    const token = box.encrypt("secret value");
    expect(() => createSecretBox(bytes(32, 2)).decrypt(token)).toThrow(/could not be decrypted/);
  });

  test("malformed tokens and bad keys are refused", () => {
    expect(() => box.decrypt("v2.AAAA")).toThrow(/unsupported/);
    expect(() => box.decrypt("plain text")).toThrow(/unsupported/);
    expect(() => box.decrypt("v1.AAAA")).toThrow(/truncated/);
    expect(() => createSecretBox(bytes(16, 1))).toThrow(/32 bytes/);
  });
});

describe("deriveKey", () => {
  const master = bytes(32, 7);

  test("is deterministic, 32 bytes, and independent per label", () => {
    const jwt = deriveKey(master, "console-jwt");
    expect(jwt.length).toBe(32);
    expect(Buffer.from(deriveKey(master, "console-jwt"))).toEqual(Buffer.from(jwt));
    expect(Buffer.from(deriveKey(master, "webhooks")).equals(Buffer.from(jwt))).toBe(false);
    expect(Buffer.from(jwt).equals(Buffer.from(master))).toBe(false);
    expect(Buffer.from(deriveKey(bytes(32, 8), "console-jwt")).equals(Buffer.from(jwt))).toBe(false);
  });

  test("matches the RFC 5869 construction (checked through WebCrypto)", async () => {
    const base = await crypto.subtle.importKey("raw", master, "HKDF", false, ["deriveBits"]);
    const bits = await crypto.subtle.deriveBits(
      { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: new TextEncoder().encode("console-jwt") },
      base,
      256,
    );
    expect(Buffer.from(deriveKey(master, "console-jwt"))).toEqual(Buffer.from(bits));
  });
});

describe("tokens", () => {
  test("hashToken is SHA-256 hex", () => {
    expect(hashToken("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(hashToken("abd")).not.toBe(hashToken("abc"));
  });

  test("safeEqual", () => {
    expect(safeEqual("tok_123", "tok_123")).toBe(true);
    expect(safeEqual("", "")).toBe(true);
    expect(safeEqual("tok_123", "tok_124")).toBe(false);
    expect(safeEqual("tok_123", "tok_1234")).toBe(false); // different lengths don't throw
    expect(safeEqual("tok_123", "")).toBe(false);
  });

  test("randomToken is base64url of the requested size and unique", () => {
    const t = randomToken();
    expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(t, "base64url").length).toBe(32);
    expect(Buffer.from(randomToken(16), "base64url").length).toBe(16);
    expect(new Set(Array.from({ length: 100 }, () => randomToken())).size).toBe(100);
  });
});
