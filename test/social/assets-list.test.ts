/**
 * Assets listed (newest first, paged, one owner's) and deleted (the row, its renditions'
 * bytes and signed URLs gone; the credential, validation and existence checks in order).
 * A deletion while the asset is being processed leaves no bytes behind.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import sharp from "sharp";
import { startTestApp, type TestApp } from "../helpers/app";
import { allPages, communitySetup, keyWith, waitUntil, type Social } from "../helpers/social";
import { inProcess, ON_BINARY } from "../helpers/target";

let app: TestApp;
beforeAll(async () => void (app = await startTestApp()));
afterAll(() => app.stop());

const UNKNOWN = "0192f2a0-3333-7ccc-8ddd-1e1f2a2b3c3d";
const png = async () => new Uint8Array(await sharp({ create: { width: 40, height: 30, channels: 3, background: "#3366cc" } }).png().toBuffer());

async function upload(s: Social, actorId: string, bytes: Uint8Array): Promise<{ id: string }> {
  const form = new FormData();
  form.append("actor_id", actorId);
  form.append("file", new Blob([bytes as Uint8Array<ArrayBuffer>]), "x.png");
  const r = await s.call("POST", "/assets", form);
  if (r.status !== 201) throw new Error(`upload: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Processes uploads: by hand in-process; on the binary its scheduler does. */
async function processed(s: Social, id: string) {
  if (!ON_BINARY) return void (await app.ctx.scheduler.runNow("social.assets.process"));
  await waitUntil(async () => (await s.call("GET", `/assets/${id}`)).body.status !== "processing", 30_000, "asset processing");
}

const fetchPath = (url: string) => app.call("GET", url.replace(/^https?:\/\/[^/]+/, ""));

test("list: newest first, every status, paged by cursor, filtered by owner (unknown owner 404, malformed 400)", async () => {
  const s = await communitySetup(app);
  const [a, b] = [await s.actor(), await s.actor()];
  const first = await upload(s, a.id, await png());
  const second = await upload(s, b.id, await png());
  const third = await upload(s, a.id, new TextEncoder().encode("not an image"));
  await processed(s, third.id);
  const all = await allPages(s, "/assets", 2);
  expect(all.map((x) => x.id)).toEqual([third.id, second.id, first.id]);
  expect(all.find((x) => x.id === third.id)).toMatchObject({ status: "failed", failure_reason: "unsupported_format" });
  expect(all.find((x) => x.id === first.id).renditions.map((r: { name: string }) => r.name)).toEqual(["thumb", "small", "large", "webp"]);
  expect((await allPages(s, `/assets?owner_actor_id=${a.id}`, 1)).map((x) => x.id)).toEqual([third.id, first.id]);
  const unknown = await s.call("GET", `/assets?owner_actor_id=${UNKNOWN}`);
  expect(unknown.status).toBe(404);
  const bad = await s.call("GET", "/assets?owner_actor_id=nope");
  expect(bad.status).toBe(400);
  expect(bad.body.error.details.map((d: { field: string }) => d.field)).toContain("owner_actor_id");
  expect((await s.call("GET", "/assets?limit=201")).status).toBe(400);
  expect((await s.call("GET", "/assets?limit=200")).status).toBe(200);
  // Another workspace's community: 404.
  const other = await communitySetup(app);
  expect((await other.call("GET", `/assets?owner_actor_id=${a.id}`)).status).toBe(404);
  expect((await app.call("GET", `${s.base}/assets`, { token: other.token })).status).toBe(404);
});

test("delete: 204, then the asset, its signed rendition URLs and a second delete answer 404; credential before existence", async () => {
  const s = await communitySetup(app);
  const a = await s.actor();
  const asset = await upload(s, a.id, await png());
  await processed(s, asset.id);
  const ready = (await s.call("GET", `/assets/${asset.id}`)).body;
  expect(ready.status).toBe("ready");
  const thumb = ready.renditions[0].url as string;
  expect((await fetchPath(thumb)).status).toBe(200);
  // A key without social.delete: 403 even for an unknown asset; a malformed id 400; another workspace 404.
  const reader = await keyWith(app, s, ["social.list", "social.read"]);
  expect((await app.call("DELETE", `${s.base}/assets/${UNKNOWN}`, { token: reader })).status).toBe(403);
  expect((await app.call("DELETE", `${s.base}/assets/${asset.id}`, { token: reader })).status).toBe(403);
  expect((await s.call("DELETE", "/assets/nope")).status).toBe(400);
  const other = await communitySetup(app);
  expect((await app.call("DELETE", `${s.base}/assets/${asset.id}`, { token: other.token })).status).toBe(404);
  const del = await s.call("DELETE", `/assets/${asset.id}`);
  expect(del.status).toBe(204);
  expect((await s.call("GET", `/assets/${asset.id}`)).status).toBe(404);
  expect((await fetchPath(thumb)).status).toBe(404);
  expect((await s.call("DELETE", `/assets/${asset.id}`)).status).toBe(404);
  expect((await allPages(s, "/assets")).map((x) => x.id)).toEqual([]);
});

inProcess("reads the object store and runs the processing job by hand")("an asset deleted while it is processed leaves no bytes in the object store", async () => {
  const s = await communitySetup(app);
  const a = await s.actor();
  const asset = await upload(s, a.id, await png());
  const prefix = `social/${s.cid}/assets/${asset.id}/`;
  expect(await app.ctx.objects.get(`${prefix}upload`)).not.toBeNull();
  // The job and the deletion run together: in whichever order they land (before the claim, while
  // the renditions are written, after), nothing of the asset stays in the store.
  const finish = app.ctx.scheduler.runNow("social.assets.process");
  expect((await s.call("DELETE", `/assets/${asset.id}`)).status).toBe(204);
  await finish;
  for (const name of ["upload", "original.png", "thumb.png", "small.png", "large.png", "webp.webp"]) expect(await app.ctx.objects.get(`${prefix}${name}`)).toBeNull();
});
