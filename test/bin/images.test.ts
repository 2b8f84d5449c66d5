/**
 * Image processing in the shipped binary: community uploads become ready with their four
 * renditions, with no file next to the executable (run from an empty directory: no
 * node_modules, no libvips). The binary carries libvips and writes it once to
 * $DATA_DIR/runtime/<sha256 prefix>/ (src/core/sharp-runtime.ts); a later start reuses the
 * copy when its hash matches and replaces it when it does not.
 *
 * Driven over HTTP only, as a client would: sign up, workspace, API key, the community
 * service switched on, uploads (multipart and the two-step signed PUT), then the asset is
 * polled until the binary's own scheduler (social.assets.process, every 5 s) processed it.
 * The inputs are made here with sharp from node_modules and carry EXIF with GPS tags; what
 * the binary stores and serves must carry none.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import sharp from "sharp";
import { requireBinary, startBinary, type BinaryProcess } from "../helpers/binary";

requireBinary();

const work = mkdtempSync(join(tmpdir(), "bunker-images-"));
const dataDir = join(work, "data");
/** The working directory of the process: empty, so nothing in it can stand in for what the binary carries. */
const emptyCwd = join(work, "cwd");
Bun.spawnSync(["mkdir", "-p", dataDir, emptyCwd]);

const ENV = { BUNKER_ENV: "test", CONSOLE_SIGNUP: "open", ARGON2_MEMORY_KIB: "1024", ARGON2_TIME_COST: "1" };
const T = 120_000;

/** What the build embedded: the libvips of the installed sharp, for this platform. */
const LIBVIPS = Bun.resolveSync(`@img/sharp-libvips-${process.platform}-${process.arch}/binary`, import.meta.dir);
const LIBVIPS_SHA = createHash("sha256").update(readFileSync(LIBVIPS)).digest("hex");
const RUNTIME_DIR = join(dataDir, "runtime", LIBVIPS_SHA.slice(0, 16));
const RUNTIME_LIB = join(RUNTIME_DIR, basename(LIBVIPS));

let proc: BinaryProcess | null = null;
afterAll(async () => {
  await proc?.stop();
  rmSync(work, { recursive: true, force: true });
});

// --- HTTP client -----------------------------------------------------------------------------

async function call(method: string, path: string, opts: { token?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: BodyInit | undefined;
  if (opts.body instanceof FormData) body = opts.body;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["content-type"] = "application/json";
  }
  const res = await fetch(`${proc!.base}${path}`, { method, headers, body });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** Signed URLs carry the configured public origin; the process listens on its own port. */
const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, proc!.base);

interface Community {
  key: string;
  base: string;
  actorId: string;
}

async function setupCommunity(): Promise<Community> {
  const n = Date.now();
  const up = await call("POST", "/platform/v1/auth/signup", { body: { email: `img${n}@example.com`, username: `img_${n}`, password: "correct horse battery" } });
  expect(up.status).toBe(200);
  const session = up.body.access_token as string;
  const ws = await call("POST", "/platform/v1/workspaces", { token: session, body: { slug: `img-${n}`, display_name: "Images" } });
  expect(ws.status).toBe(201);
  const minted = await call("POST", `/platform/v1/workspaces/${ws.body.slug}/api-keys`, { token: session, body: { name: "all", policy: [{ effect: "allow", actions: ["*"], resources: ["*"] }] } });
  expect(minted.status).toBe(201);
  const key = minted.body.key as string;
  expect((await call("PUT", `/platform/v1/workspaces/${ws.body.slug}/services/social`, { token: session })).status).toBe(200);
  const c = await call("POST", `/social/v1/workspaces/${ws.body.id}/communities`, { token: key, body: { slug: `img-${n}`, display_name: "Images" } });
  expect(c.status).toBe(201);
  const base = `/social/v1/communities/${c.body.id}`;
  const a = await call("POST", `${base}/actors`, { token: key, body: { external_id: "photographer", display_name: "Photographer" } });
  expect(a.status).toBe(201);
  return { key, base, actorId: a.body.actor.id };
}

async function uploadMultipart(c: Community, bytes: Uint8Array, name: string): Promise<string> {
  const form = new FormData();
  form.append("actor_id", c.actorId);
  form.append("file", new Blob([bytes as Uint8Array<ArrayBuffer>]), name);
  const r = await call("POST", `${c.base}/assets`, { token: c.key, body: form });
  expect(r.status).toBe(201);
  expect(r.body.status).toBe("processing");
  return r.body.id;
}

/** The two-step upload: an asset with a signed URL, then the raw bytes PUT to it without a credential. */
async function uploadTwoStep(c: Community, bytes: Uint8Array): Promise<string> {
  const r = await call("POST", `${c.base}/assets/uploads`, { token: c.key, body: { actor_id: c.actorId } });
  expect(r.status).toBe(201);
  const put = await fetch(local(r.body.upload_url), { method: "PUT", body: bytes as Uint8Array<ArrayBuffer>, headers: { "content-type": "application/octet-stream" } });
  expect(put.status).toBe(204);
  return r.body.asset.id;
}

/** Polls the asset until it leaves processing (the scheduler runs every 5 s). */
async function settled(c: Community, id: string, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await call("GET", `${c.base}/assets/${id}`, { token: c.key });
    expect(r.status).toBe(200);
    if (r.body.status !== "processing" && r.body.status !== "uploading") return r.body;
    if (Date.now() > deadline) throw new Error(`asset ${id} still ${r.body.status} after ${timeoutMs} ms:\n${proc!.output().slice(-3000)}`);
    await Bun.sleep(250);
  }
}

// --- inputs ----------------------------------------------------------------------------------

/** EXIF with an owner and a position: none of it may survive processing. */
const EXIF = {
  IFD0: { Artist: "someone", Copyright: "secret-owner" },
  IFD3: { GPSLatitudeRef: "N", GPSLatitude: "48/1 51/1 24/1", GPSLongitudeRef: "E", GPSLongitude: "2/1 21/1 3/1" },
};
const GPS_IFD_POINTER = 0x8825;

/** The tag numbers of an EXIF block's first IFD (enough to see whether a GPS IFD is referenced). */
function ifd0Tags(exif: Buffer): number[] {
  const tiff = exif.subarray(exif.subarray(0, 6).toString("latin1") === "Exif\0\0" ? 6 : 0);
  const le = tiff.toString("latin1", 0, 2) === "II";
  const u16 = (o: number) => (le ? tiff.readUInt16LE(o) : tiff.readUInt16BE(o));
  const at = le ? tiff.readUInt32LE(4) : tiff.readUInt32BE(4);
  return Array.from({ length: u16(at) }, (_, i) => u16(at + 2 + i * 12));
}

/**
 * A JPEG stored 2400x1800 with EXIF orientation 6 (shown rotated 90° clockwise, so 1800x2400)
 * and a blue block in its stored top-left corner, which shows at the top right once upright.
 */
async function orientedJpeg(): Promise<Uint8Array> {
  const block = await sharp({ create: { width: 600, height: 600, channels: 3, background: { r: 0, g: 0, b: 255 } } }).png().toBuffer();
  const raw = await sharp({ create: { width: 2400, height: 1800, channels: 3, background: { r: 255, g: 0, b: 0 } } })
    .composite([{ input: block, left: 0, top: 0 }])
    .png()
    .toBuffer();
  return new Uint8Array(await sharp(raw).jpeg().withExif(EXIF).withMetadata({ orientation: 6 }).toBuffer());
}

async function made(width: number, height: number, format: "png" | "webp" | "gif" | "avif", alpha = false): Promise<Uint8Array> {
  const img = sharp({ create: { width, height, channels: alpha ? 4 : 3, background: alpha ? { r: 0, g: 160, b: 60, alpha: 0.5 } : { r: 30, g: 90, b: 200 } } }).toFormat(format);
  // GIF has no EXIF; the others carry it (libvips writes it into each container).
  return new Uint8Array(await (format === "gif" ? img : img.withExif(EXIF)).toBuffer());
}

interface Case {
  name: string;
  bytes: Uint8Array;
  upload: "multipart" | "two-step";
  type: string;
  /** Upright size, then the four renditions' sizes: thumb (fits 200), small (640), large and webp (1600, never enlarged). */
  size: [number, number];
  renditions: [string, string, number, number][];
  hasExif: boolean;
  /** Semi-transparent pixels: every rendition must keep its alpha channel. */
  alpha?: true;
}

const sizes = (type: string, t: [number, number], s: [number, number], l: [number, number]): [string, string, number, number][] => [
  ["thumb", type, ...t],
  ["small", type, ...s],
  ["large", type, ...l],
  ["webp", "image/webp", ...l],
];

let cases: Case[] = [];
beforeAll(async () => {
  cases = [
    { name: "JPEG, EXIF orientation 6 and GPS", bytes: await orientedJpeg(), upload: "multipart", type: "image/jpeg", size: [1800, 2400], renditions: sizes("image/jpeg", [150, 200], [480, 640], [1200, 1600]), hasExif: true },
    { name: "PNG with alpha", bytes: await made(400, 200, "png", true), upload: "multipart", type: "image/png", size: [400, 200], renditions: sizes("image/png", [200, 100], [400, 200], [400, 200]), hasExif: true, alpha: true },
    { name: "WebP", bytes: await made(1000, 500, "webp"), upload: "multipart", type: "image/webp", size: [1000, 500], renditions: sizes("image/webp", [200, 100], [640, 320], [1000, 500]), hasExif: true },
    { name: "GIF", bytes: await made(320, 240, "gif"), upload: "multipart", type: "image/gif", size: [320, 240], renditions: sizes("image/gif", [200, 150], [320, 240], [320, 240]), hasExif: false },
    { name: "AVIF (two-step upload)", bytes: await made(800, 600, "avif"), upload: "two-step", type: "image/avif", size: [800, 600], renditions: sizes("image/avif", [200, 150], [640, 480], [800, 600]), hasExif: true },
  ];
  // The inputs really carry what must be stripped (else the assertions below prove nothing).
  for (const c of cases) {
    const meta = await sharp(c.bytes).metadata();
    if (c.hasExif) expect({ name: c.name, gps: ifd0Tags(meta.exif!).includes(GPS_IFD_POINTER) }).toEqual({ name: c.name, gps: true });
  }
  expect((await sharp(cases[0].bytes).metadata()).orientation).toBe(6);
  expect((await sharp(cases[1].bytes).metadata()).hasAlpha).toBe(true);
  proc = await startBinary(ENV, { dataDir, cwd: emptyCwd });
}, T);

/** The JSON log lines of the running process with this message. */
const logLines = (msg: string) =>
  proc!
    .output()
    .split("\n")
    .filter((l) => l.includes(`"msg":"${msg}"`))
    .map((l) => JSON.parse(l));

/** Asserts what a served or stored image must not carry. */
async function expectClean(what: string, bytes: Uint8Array) {
  const meta = await sharp(bytes).metadata();
  expect({ what, exif: meta.exif, xmp: meta.xmp, orientation: meta.orientation }).toEqual({ what, exif: undefined, xmp: undefined, orientation: undefined });
  expect({ what, owner: Buffer.from(bytes).includes("secret-owner") }).toEqual({ what, owner: false });
  return meta;
}

describe("images in the compiled binary, run from an empty directory", () => {
  test("JPEG (EXIF orientation, GPS), PNG with alpha, WebP, GIF and AVIF become ready with four clean renditions", async () => {
    const c = await setupCommunity();
    const ids = await Promise.all(cases.map((x) => (x.upload === "multipart" ? uploadMultipart(c, x.bytes, x.name) : uploadTwoStep(c, x.bytes))));
    for (const [i, x] of cases.entries()) {
      const a = await settled(c, ids[i]);
      expect({ name: x.name, status: a.status, failure_reason: a.failure_reason, content_type: a.content_type, size: [a.width, a.height] }).toEqual({
        name: x.name,
        status: "ready",
        failure_reason: null,
        content_type: x.type,
        size: x.size,
      });
      expect(a.renditions.map((r: any) => [r.name, r.content_type, r.width, r.height])).toEqual(x.renditions);
      for (const r of a.renditions) {
        // Served over HTTP from the signed URL, without a credential.
        const res = await fetch(local(r.url));
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toBe(r.content_type);
        const bytes = new Uint8Array(await res.arrayBuffer());
        expect(bytes.byteLength).toBe(r.byte_size);
        const meta = await expectClean(`${x.name} ${r.name}`, bytes);
        expect({ name: `${x.name} ${r.name}`, size: [meta.width, meta.height] }).toEqual({ name: `${x.name} ${r.name}`, size: [r.width, r.height] });
        // Transparency survives, the WebP rendition included.
        if (x.alpha) expect({ name: `${x.name} ${r.name}`, alpha: meta.hasAlpha }).toEqual({ name: `${x.name} ${r.name}`, alpha: true });
      }
      // The stored original (not served; read from the local object store): upright, clean, and the upload is gone.
      const dir = join(dataDir, "objects", c.base.replace("/social/v1/communities/", "social/"), "assets", a.id);
      const files = readdirSync(dir).filter((f) => !f.startsWith("."));
      expect(files.filter((f) => f.startsWith("original.")).length).toBe(1);
      expect(files).not.toContain("upload");
      const original = new Uint8Array(readFileSync(join(dir, files.find((f) => f.startsWith("original."))!)));
      const meta = await expectClean(`${x.name} original`, original);
      expect([meta.width, meta.height]).toEqual(x.size);
    }
    // The JPEG was turned upright, not only given swapped dimensions: its blue corner is now top right.
    const jpeg = await settled(c, ids[0]);
    const thumb = new Uint8Array(await (await fetch(local(jpeg.renditions[0].url))).arrayBuffer());
    const { data, info } = await sharp(thumb).raw().toBuffer({ resolveWithObject: true });
    const px = (x: number, y: number) => [...data.subarray((y * info.width + x) * info.channels, (y * info.width + x) * info.channels + 3)];
    expect(px(info.width - 5, 5)[2]).toBeGreaterThan(200); // top right: blue
    expect(px(5, 5)[0]).toBeGreaterThan(200); // top left: red
    expect(logLines("image processing unavailable")).toEqual([]);
  }, T);

  test("libvips was written once under DATA_DIR/runtime, read-only, and is the one the process mapped (nothing from node_modules)", async () => {
    const loaded = logLines("libvips loaded");
    expect(loaded.map((l) => [l.path, l.version, l.reused])).toEqual([[RUNTIME_LIB, sharp.versions.vips, false]]);
    expect(createHash("sha256").update(readFileSync(RUNTIME_LIB)).digest("hex")).toBe(LIBVIPS_SHA);
    expect(statSync(RUNTIME_LIB).mode & 0o777).toBe(0o400);
    expect(statSync(RUNTIME_DIR).mode & 0o777).toBe(0o500);
    expect(readdirSync(RUNTIME_DIR)).toEqual([basename(LIBVIPS)]);
    const maps = readFileSync(`/proc/${proc!.proc.pid}/maps`, "utf8");
    expect(maps).toContain(RUNTIME_LIB);
    expect(maps).not.toContain("node_modules");
  }, T);

  test("a second start reuses the copy whose hash matches; a copy that does not match is replaced", async () => {
    const before = statSync(RUNTIME_LIB);
    await proc!.stop();

    proc = await startBinary(ENV, { dataDir, cwd: emptyCwd });
    let c = await setupCommunity();
    expect((await settled(c, await uploadMultipart(c, cases[1].bytes, "again.png"))).status).toBe("ready");
    expect(logLines("libvips loaded").map((l) => [l.path, l.reused])).toEqual([[RUNTIME_LIB, true]]);
    const after = statSync(RUNTIME_LIB);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    await proc!.stop();

    // Damaged on disk (one byte): the next start finds the hash wrong and writes a good copy.
    chmodSync(RUNTIME_DIR, 0o700);
    chmodSync(RUNTIME_LIB, 0o600);
    const damaged = readFileSync(RUNTIME_LIB);
    damaged[damaged.length >> 1] ^= 0xff;
    writeFileSync(RUNTIME_LIB, damaged);
    chmodSync(RUNTIME_LIB, 0o400);
    chmodSync(RUNTIME_DIR, 0o500);

    proc = await startBinary(ENV, { dataDir, cwd: emptyCwd });
    c = await setupCommunity();
    expect((await settled(c, await uploadMultipart(c, cases[3].bytes, "again.gif"))).status).toBe("ready");
    expect(logLines("libvips loaded").map((l) => [l.path, l.reused])).toEqual([[RUNTIME_LIB, false]]);
    expect(createHash("sha256").update(readFileSync(RUNTIME_LIB)).digest("hex")).toBe(LIBVIPS_SHA);
    expect(statSync(RUNTIME_LIB).ino).not.toBe(before.ino);
    expect(readdirSync(RUNTIME_DIR)).toEqual([basename(LIBVIPS)]);
  }, T);
});
