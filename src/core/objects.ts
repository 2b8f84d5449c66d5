/**
 * Object store for blobs the database should not hold (raw mail, attachments, uploads,
 * exports). Two back ends behind one interface:
 * - local: files under <dataDir>/objects/<key>; a content type other than the default sits
 *   in a hidden sidecar (<dir>/.<name>.meta). Writes go to a temp file that is fsynced and
 *   renamed over the target, so a crash leaves the old object or the new one, never half a
 *   file. The sidecar is renamed into place but not fsynced: losing it to a crash costs only
 *   the content type (reads fall back to the default), and one fsync per object instead of
 *   two is most of the cost of a put (inbound mail stores one per message).
 * - s3: Bun.S3Client on the configured bucket; credentials, region and endpoint come from
 *   the usual S3_* / AWS_* environment variables.
 * Keys are validated the same way for both, so data moves between back ends unchanged.
 */
import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, rm, stat, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ApiError, invalidField } from "./errors";

export interface StoredObject {
  data: Uint8Array;
  contentType: string;
}

export interface ObjectStore {
  put(key: string, data: Uint8Array | string, contentType?: string): Promise<void>;
  get(key: string): Promise<StoredObject | null>;
  delete(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
}

export interface ObjectStoreOptions {
  kind: "local" | "s3";
  dataDir: string;
  s3Bucket?: string | null;
}

const DEFAULT_TYPE = "application/octet-stream";
const MAX_KEY_LENGTH = 512;
// Segments start with a letter, digit or underscore: a leading dot is reserved for the
// local store's sidecars and temp files, and rules out "." and "..".
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._=+-]*$/;

/**
 * Throws a 400 unless key is "segment/segment/..." of safe characters: no "..", no
 * absolute path, no backslash, no empty segment, no leading dot, at most 512 characters.
 */
export function validateObjectKey(key: string): string {
  if (typeof key !== "string" || key.length === 0) throw invalidField("key", "must not be empty");
  if (key.length > MAX_KEY_LENGTH) throw invalidField("key", `must be at most ${MAX_KEY_LENGTH} characters`);
  const segments = key.split("/");
  for (const s of segments) {
    if (!SEGMENT.test(s)) throw invalidField("key", `segment "${s}" must match ${SEGMENT.source} (no "..", no absolute path, no empty segment)`);
  }
  return key;
}

function contentTypeOf(contentType: string | undefined): string {
  const t = (contentType ?? DEFAULT_TYPE).trim();
  // It ends up in a header (S3, downloads): refuse anything that could split one.
  if (!t || /[\r\n\0]/.test(t) || t.length > 255) throw invalidField("contentType", "must be a single-line media type");
  return t;
}

const toBytes = (data: Uint8Array | string) => (typeof data === "string" ? new TextEncoder().encode(data) : data);

export function createObjectStore(opts: ObjectStoreOptions): ObjectStore {
  if (opts.kind === "s3") return createS3Store(opts.s3Bucket ?? null);
  return createLocalStore(join(opts.dataDir, "objects"));
}

// ------------------------------------------------------------------ local folder

function createLocalStore(root: string): ObjectStore {
  const pathOf = (key: string) => join(root, validateObjectKey(key));
  const metaOf = (path: string) => join(dirname(path), `.${path.slice(dirname(path).length + 1)}.meta`);

  async function writeAtomic(path: string, bytes: Uint8Array, durable: boolean) {
    const tmp = join(dirname(path), `.${randomBytes(8).toString("hex")}.tmp`);
    const fh = await open(tmp, "wx", 0o600);
    try {
      await fh.writeFile(bytes);
      if (durable) await fh.sync();
    } catch (e) {
      await fh.close();
      await unlink(tmp).catch(() => {});
      throw e;
    }
    await fh.close();
    try {
      await rename(tmp, path);
    } catch (e) {
      await unlink(tmp).catch(() => {});
      throw e;
    }
  }

  const isMissing = (e: unknown) => ["ENOENT", "ENOTDIR", "EISDIR"].includes((e as NodeJS.ErrnoException).code ?? "");

  return {
    async put(key, data, contentType) {
      const path = pathOf(key);
      const type = contentTypeOf(contentType);
      try {
        await mkdir(dirname(path), { recursive: true });
        // Data first: a crash before the sidecar is written leaves the new bytes with the
        // old (or default) type, never a type describing bytes that are not there.
        await writeAtomic(path, toBytes(data), true);
        // The default type needs no sidecar; one left by an earlier put of this key goes.
        if (type === DEFAULT_TYPE) await rm(metaOf(path), { force: true });
        else await writeAtomic(metaOf(path), new TextEncoder().encode(JSON.stringify({ contentType: type })), false);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        // "a" exists as an object and "a/b" is being written, or the other way round.
        if (code === "ENOTDIR" || code === "EISDIR" || code === "EEXIST") throw new ApiError(409, "CONFLICT", `Object key "${key}" conflicts with an existing object`);
        throw e;
      }
    },

    async get(key) {
      const path = pathOf(key);
      let data: Uint8Array;
      try {
        data = new Uint8Array(await readFile(path));
      } catch (e) {
        if (isMissing(e)) return null;
        throw e;
      }
      let contentType = DEFAULT_TYPE;
      try {
        contentType = JSON.parse(await readFile(metaOf(path), "utf8")).contentType ?? DEFAULT_TYPE;
      } catch {
        // A missing or damaged sidecar only costs the content type.
      }
      return { data, contentType };
    },

    async delete(key) {
      const path = pathOf(key);
      try {
        if ((await stat(path)).isDirectory()) return; // a prefix of other keys, not an object
      } catch (e) {
        if (isMissing(e)) return;
        throw e;
      }
      await rm(path, { force: true });
      await rm(metaOf(path), { force: true });
    },

    async exists(key) {
      try {
        return (await stat(pathOf(key))).isFile();
      } catch (e) {
        if (isMissing(e)) return false;
        throw e;
      }
    },
  };
}

// ------------------------------------------------------------------ S3 (Bun.S3Client)

function createS3Store(bucket: string | null): ObjectStore {
  // Only constructed here; no request is made until the store is used.
  const client = new Bun.S3Client(bucket ? { bucket } : {});
  return {
    async put(key, data, contentType) {
      validateObjectKey(key);
      await client.write(key, toBytes(data), { type: contentTypeOf(contentType) });
    },
    async get(key) {
      validateObjectKey(key);
      const file = client.file(key);
      try {
        const [bytes, info] = await Promise.all([file.bytes(), file.stat()]);
        return { data: bytes, contentType: info.type || DEFAULT_TYPE };
      } catch (e) {
        // Error codes for a missing key differ between GET and HEAD and between S3
        // implementations: ask plainly whether the object is there.
        if (!(await client.exists(key))) return null;
        throw e;
      }
    },
    async delete(key) {
      validateObjectKey(key);
      await client.delete(key);
    },
    async exists(key) {
      validateObjectKey(key);
      return client.exists(key);
    },
  };
}
