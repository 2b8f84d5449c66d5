import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createObjectStore, validateObjectKey } from "../../src/core/objects";

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "bunker-objects-"));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

test("local: put, get, exists, delete round trip with content type", async () => {
  const dataDir = tempDir();
  const store = createObjectStore({ kind: "local", dataDir });
  const raw = new Uint8Array([0, 1, 2, 250, 255]);
  await store.put("mail/raw/msg_1.eml", raw, "message/rfc822");
  await store.put("exports/ws_1/report.json", '{"ok":true}', "application/json");
  await store.put("blob", "no type");

  expect(await store.exists("mail/raw/msg_1.eml")).toBe(true);
  const got = await store.get("mail/raw/msg_1.eml");
  expect(got?.contentType).toBe("message/rfc822");
  expect([...got!.data]).toEqual([0, 1, 2, 250, 255]);
  expect(new TextDecoder().decode((await store.get("exports/ws_1/report.json"))!.data)).toBe('{"ok":true}');
  expect((await store.get("blob"))!.contentType).toBe("application/octet-stream");
  // The bytes really live under <dataDir>/objects/<key>.
  expect(readFileSync(join(dataDir, "objects/mail/raw/msg_1.eml"))).toEqual(Buffer.from(raw));

  await store.delete("mail/raw/msg_1.eml");
  expect(await store.exists("mail/raw/msg_1.eml")).toBe(false);
  expect(await store.get("mail/raw/msg_1.eml")).toBeNull();
  await store.delete("mail/raw/msg_1.eml"); // deleting twice is fine
  expect(readdirSync(join(dataDir, "objects/mail/raw"))).toEqual([]); // sidecar gone too
});

test("local: overwrite replaces data and type and leaves no temp files", async () => {
  const dataDir = tempDir();
  const store = createObjectStore({ kind: "local", dataDir });
  await store.put("a/b.txt", "first version, longer", "text/plain");
  await store.put("a/b.txt", "second", "text/markdown");
  const got = await store.get("a/b.txt");
  expect(new TextDecoder().decode(got!.data)).toBe("second");
  expect(got!.contentType).toBe("text/markdown");
  expect(readdirSync(join(dataDir, "objects/a")).sort()).toEqual([".b.txt.meta", "b.txt"]);
});

test("local: the default type writes no sidecar; overwriting a typed object with it removes the old one", async () => {
  const dataDir = tempDir();
  const store = createObjectStore({ kind: "local", dataDir });
  await store.put("d/plain", "bytes");
  expect(readdirSync(join(dataDir, "objects/d"))).toEqual(["plain"]);
  await store.put("d/typed", "x", "text/plain");
  await store.put("d/typed", "y");
  expect(readdirSync(join(dataDir, "objects/d")).sort()).toEqual(["plain", "typed"]);
  expect((await store.get("d/typed"))!.contentType).toBe("application/octet-stream");
});

test("local: a key that is only a folder of other keys is not an object", async () => {
  const store = createObjectStore({ kind: "local", dataDir: tempDir() });
  await store.put("dir/file", "x");
  expect(await store.exists("dir")).toBe(false);
  expect(await store.get("dir")).toBeNull();
  await store.delete("dir");
  expect(await store.exists("dir/file")).toBe(true);
  await expect(store.put("dir", "clash")).rejects.toMatchObject({ status: 409 });
  await expect(store.put("dir/file/deeper", "clash")).rejects.toMatchObject({ status: 409 });
  expect(new TextDecoder().decode((await store.get("dir/file"))!.data)).toBe("x");
});

test("local: missing or damaged sidecar falls back to octet-stream", async () => {
  const dataDir = tempDir();
  const store = createObjectStore({ kind: "local", dataDir });
  await store.put("x.bin", "data", "image/png");
  writeFileSync(join(dataDir, "objects/.x.bin.meta"), "{not json");
  expect((await store.get("x.bin"))!.contentType).toBe("application/octet-stream");
});

test("local: unsafe keys are refused before touching the disk", async () => {
  const dataDir = tempDir();
  const store = createObjectStore({ kind: "local", dataDir });
  for (const key of ["../escape", "a/../../etc/passwd", "/etc/passwd", "a//b", "a/", ".hidden", "a/.b.meta", "a\\b", "sp ace", "nul\0", ""]) {
    await expect(store.put(key, "x")).rejects.toMatchObject({ status: 400, code: "VALIDATION_ERROR" });
    await expect(store.get(key)).rejects.toMatchObject({ status: 400 });
  }
  await expect(store.put("ok", "x", "text/plain\r\nX-Injected: 1")).rejects.toMatchObject({ status: 400 });
  expect(readdirSync(dataDir)).toEqual([]);
});

test("key validation (shared by the local and S3 stores)", () => {
  for (const ok of ["a", "mail/raw/msg_01J.eml", "exports/ws_1/2030-01-01T00=00.json", "a+b-c_d.e"]) expect(validateObjectKey(ok)).toBe(ok);
  for (const bad of ["", "..", ".", "../x", "x/..", "/abs", "x/", "x//y", ".dot", "é", "a b", "a?b", "x".repeat(513)]) {
    expect(() => validateObjectKey(bad)).toThrow();
  }
});

test("s3: constructs without network and validates keys before any request", async () => {
  const store = createObjectStore({ kind: "s3", dataDir: tempDir(), s3Bucket: "bunker-test" });
  await expect(store.put("../x", "y")).rejects.toMatchObject({ status: 400 });
  await expect(store.get("/abs")).rejects.toMatchObject({ status: 400 });
  await expect(store.exists("a//b")).rejects.toMatchObject({ status: 400 });
  await expect(store.delete(".hidden")).rejects.toMatchObject({ status: 400 });
});
