/**
 * Assets: real image uploads (multipart), processing by the scheduler job into renditions
 * checked for dimensions and stripped metadata, asset.ready / asset.failed, signed and
 * expiring rendition URLs, the size cap at its boundary, and use in posts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { ASSET_MAX_BYTES } from "../../src/services/social/assets/service";
import { startTestApp, type TestApp } from "../helpers/app";
import { communitySetup, eventsOf, waitUntil, type Social } from "../helpers/social";
import { inProcess, ON_BINARY } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
  if (!ON_BINARY) app.webhooks.options.autoKick = false;
});
afterAll(() => app.stop());

const upload = (s: Social, actorId: string, bytes: Uint8Array, name = "photo.jpg") => {
  const form = new FormData();
  form.append("actor_id", actorId);
  form.append("file", new Blob([bytes as Uint8Array<ArrayBuffer>]), name);
  return s.call("POST", "/assets", form);
};

async function jpeg(width: number, height: number): Promise<Uint8Array> {
  const buf = await sharp({ create: { width, height, channels: 3, background: { r: 200, g: 30, b: 90 } } })
    .jpeg()
    .withMetadata({ orientation: 1, exif: { IFD0: { Copyright: "secret-owner", Artist: "someone" } } })
    .toBuffer();
  return new Uint8Array(buf);
}

/** Runs the processing job: by hand in-process; on the binary its scheduler does, so wait until none of `ids` is processing. */
async function processed(s: Social, ids: string[]) {
  if (!ON_BINARY) return void (await app.ctx.scheduler.runNow("social.assets.process"));
  await waitUntil(async () => {
    for (const id of ids) if ((await s.call("GET", `/assets/${id}`)).body.status === "processing") return false;
    return true;
  }, 30_000, "asset processing");
}

const fetchPath = (url: string) => app.handle(new Request(url.replace(/^https?:\/\/[^/]+/, "http://localhost")));

describe("upload and processing", () => {
  inProcess("runs the processing job by hand (scheduler.runNow), reads events from the store, moves the injected clock past URL expiry")("a JPEG becomes ready with thumb, small, large and webp renditions of the right sizes, EXIF stripped, signed URLs", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const img = await jpeg(2000, 1500);
    expect((await sharp(img).metadata()).exif).toBeDefined();
    const r = await upload(s, a.id, img);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ owner_actor_id: a.id, kind: "image", status: "processing", renditions: [] });
    // Not ready yet: a post cannot use it.
    expect((await s.call("POST", "/posts", { actor_id: a.id, kind: "image", assets: [{ asset_id: r.body.id }] })).status).toBe(422);
    await app.ctx.scheduler.runNow("social.assets.process");
    const g = await s.call("GET", `/assets/${r.body.id}`);
    expect(g.body).toMatchObject({ status: "ready", content_type: "image/jpeg", width: 2000, height: 1500, failure_reason: null });
    expect(g.body.renditions.map((x: any) => [x.name, x.content_type, x.width, x.height])).toEqual([
      ["thumb", "image/jpeg", 200, 150],
      ["small", "image/jpeg", 640, 480],
      ["large", "image/jpeg", 1600, 1200],
      ["webp", "image/webp", 1600, 1200],
    ]);
    const ev = await eventsOf(app, s.cid, "asset.");
    expect(ev.map((e) => [e.type, e.data.id, e.data.status])).toEqual([["asset.ready", r.body.id, "ready"]]);
    // Signed URL: served without a credential; bytes are a real image without EXIF.
    const thumb = g.body.renditions[0];
    const res = await fetchPath(thumb.url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/jpeg");
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(bytes.byteLength).toBe(thumb.byte_size);
    const meta = await sharp(bytes).metadata();
    expect([meta.width, meta.height, meta.exif]).toEqual([200, 150, undefined]);
    // Tampered or expired signatures are 403.
    expect((await fetchPath(thumb.url.replace(/sig=(.)/, (_m: string, ch: string) => `sig=${ch === "0" ? "1" : "0"}`))).status).toBe(403);
    expect((await fetchPath(thumb.url.replace("/thumb?", "/large?"))).status).toBe(403);
    app.clock.advance(3600_000);
    const expired = await fetchPath(thumb.url);
    expect(expired.status).toBe(403);
    expect((await expired.json()).error.code).toBe("URL_EXPIRED");
    // Ready and owned: usable in posts and comments; not by another actor.
    const p = await s.call("POST", "/posts", { actor_id: a.id, kind: "image", body: "pic", assets: [{ asset_id: r.body.id, alt_text: "pink" }] });
    expect(p.status).toBe(201);
    expect(p.body.assets).toEqual([{ asset_id: r.body.id, alt_text: "pink" }]);
    const b = await s.actor();
    expect((await s.call("POST", `/posts/${p.body.id}/comments`, { actor_id: b.id, body: "x", assets: [{ asset_id: r.body.id }] })).status).toBe(422);
    expect((await s.call("POST", `/posts/${p.body.id}/comments`, { actor_id: a.id, body: "x", assets: [{ asset_id: r.body.id }] })).status).toBe(201);
  });

  test("a small PNG keeps its size (no enlargement); garbage bytes fail with unsupported_format (asset.failed)", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const png = new Uint8Array(await sharp({ create: { width: 100, height: 60, channels: 4, background: "#00ff0080" } }).png().toBuffer());
    const ok = await upload(s, a.id, png, "x.png");
    const bad = await upload(s, a.id, new TextEncoder().encode("<svg>not really</svg> just text"), "x.jpg");
    expect(bad.status).toBe(201);
    await processed(s, [ok.body.id, bad.body.id]);
    const g = (await s.call("GET", `/assets/${ok.body.id}`)).body;
    expect(g.renditions.map((x: any) => [x.name, x.content_type, x.width, x.height])).toEqual([
      ["thumb", "image/png", 100, 60],
      ["small", "image/png", 100, 60],
      ["large", "image/png", 100, 60],
      ["webp", "image/webp", 100, 60],
    ]);
    const f = (await s.call("GET", `/assets/${bad.body.id}`)).body;
    expect(f).toMatchObject({ status: "failed", failure_reason: "unsupported_format", renditions: [] });
    const ev = await eventsOf(app, s.cid, "asset.failed");
    expect(ev.map((e) => e.data.failure_reason)).toEqual(["unsupported_format"]);
  });

  test("size cap at its boundary, missing file 400, unknown owner 404, another community 404", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const big = new Uint8Array(ASSET_MAX_BYTES);
    expect((await upload(s, a.id, big)).status).toBe(201);
    expect((await upload(s, a.id, new Uint8Array(ASSET_MAX_BYTES + 1))).status).toBe(413);
    const form = new FormData();
    form.append("actor_id", a.id);
    expect((await s.call("POST", "/assets", form)).status).toBe(400);
    expect((await upload(s, "0192f2a0-3333-7ccc-8ddd-1e1f2a2b3c3d", new Uint8Array([1, 2, 3]))).status).toBe(404);
    const r = await upload(s, a.id, new Uint8Array([1, 2, 3]));
    const other = await communitySetup(app);
    expect((await other.call("GET", `/assets/${r.body.id}`)).status).toBe(404);
  });
});

describe("two-step upload", () => {
  inProcess("runs the processing job by hand (scheduler.runNow) and moves the injected clock past the upload URL's expiry")("POST /assets/uploads gives a signed PUT URL; the bytes make the asset process; once only; signature and expiry checked", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const r = await s.call("POST", "/assets/uploads", { actor_id: a.id });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ asset: { status: "uploading", owner_actor_id: a.id }, upload_method: "PUT", max_bytes: ASSET_MAX_BYTES });
    const put = (url: string, bytes: Uint8Array) => app.handle(new Request(url.replace(/^https?:\/\/[^/]+/, "http://localhost"), { method: "PUT", body: bytes as Uint8Array<ArrayBuffer>, headers: { "content-type": "application/octet-stream" } }));
    const img = await jpeg(800, 600);
    expect((await put(r.body.upload_url.replace(/sig=(.)/, (_m: string, ch: string) => `sig=${ch === "0" ? "1" : "0"}`), img)).status).toBe(403);
    const ok = await put(r.body.upload_url, img);
    expect(ok.status).toBe(204);
    expect((await put(r.body.upload_url, img)).status).toBe(409);
    await app.ctx.scheduler.runNow("social.assets.process");
    const g = (await s.call("GET", `/assets/${r.body.asset.id}`)).body;
    expect(g).toMatchObject({ status: "ready", width: 800, height: 600 });
    expect(g.renditions.map((x: any) => [x.name, x.width, x.height])).toEqual([["thumb", 200, 150], ["small", 640, 480], ["large", 800, 600], ["webp", 800, 600]]);
    // The upload URL cannot read renditions ("upload" is not a rendition name: 400), and it expires after 15 minutes.
    const asRendition = await fetchPath(r.body.upload_url.replace("/upload?", "/renditions/upload?"));
    expect(asRendition.status).toBe(400);
    expect((await asRendition.json()).error.details.map((d: { field: string }) => d.field)).toEqual(["name"]);
    const late = await s.call("POST", "/assets/uploads", { actor_id: a.id });
    app.clock.advance(15 * 60_000);
    const expired = await put(late.body.upload_url, img);
    expect(expired.status).toBe(403);
    expect((await expired.json()).error.code).toBe("URL_EXPIRED");
    const big = await s.call("POST", "/assets/uploads", { actor_id: a.id });
    expect((await put(big.body.upload_url, new Uint8Array(ASSET_MAX_BYTES + 1))).status).toBe(413);
    expect((await put(big.body.upload_url, new Uint8Array(ASSET_MAX_BYTES))).status).toBe(204);
  });
});
