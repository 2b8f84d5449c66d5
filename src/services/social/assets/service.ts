/**
 * Assets: image uploads (multipart, or two steps: POST /assets/uploads for a signed PUT URL
 * valid 15 minutes, then the raw bytes PUT to it; at most 10 MiB either way), processed by the scheduler (job
 * social.assets.process, every 5 s) into renditions with sharp, then asset.ready or
 * asset.failed (failure_reason). The type is sniffed from the bytes by libvips (sharp's
 * metadata), never taken from the client; JPEG, PNG, WebP, GIF and AVIF are accepted
 * (anything else fails with unsupported_format, an undecodable file with corrupt_image).
 * The stored original is re-encoded upright without metadata (EXIF, GPS and the rest are
 * stripped); renditions: thumb (fits 200x200), small (640), large (1600), webp (1600, WebP).
 * Rendition URLs are signed (HMAC-SHA256 with a key derived from the master key) and
 * expire after ASSET_URL_TTL_S (1 h); GET .../renditions/{name}?expires&sig serves the
 * bytes from the object store without a credential. sharp is loaded on first use
 * (core/sharp-runtime.ts, which also makes it work inside the compiled binary); where it
 * cannot load, uploads fail with image_processing_unavailable.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type Sharp from "sharp";
import type { Principal } from "../../../access/principal";
import { tx } from "../../../core/db";
import { ApiError, badRequest, forbidden, notFound } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { loadSharp } from "../../../core/sharp-runtime";
import { dialect } from "../../../core/store/sql";
import { page, pageArgs } from "../core/common";
import type { PostService } from "../posts/service";
import { RENDITIONS, type RenditionName } from "./renditions";
import * as store from "./store";

export const ASSET_MAX_BYTES = 10 * 1024 * 1024;
export const ASSET_URL_TTL_S = 3600;
export const UPLOAD_URL_TTL_S = 900;
const FORMATS: Record<string, string> = { jpeg: "image/jpeg", png: "image/png", webp: "image/webp", gif: "image/gif", heif: "image/avif" };
export { RENDITIONS, RENDITION_NAMES, type RenditionName } from "./renditions";
const EXT: Record<string, string> = { "image/jpeg": "jpg", "image/png": "png", "image/webp": "webp", "image/gif": "gif", "image/avif": "avif" };

export class AssetService {
  private readonly key: Buffer;

  constructor(private readonly posts: PostService) {
    this.key = createHmac("sha256", Buffer.from(posts.lane.ctx.masterKey)).update("social-asset-urls").digest();
  }

  private sign(cid: string, id: string, name: string, expires: number): string {
    return createHmac("sha256", this.key).update(`${cid}/${id}/${name}/${expires}`).digest("hex");
  }

  view(r: store.AssetRow) {
    const expires = Math.floor(this.posts.lane.ctx.clock.nowMs() / 1000) + ASSET_URL_TTL_S;
    const base = `${this.posts.lane.ctx.config.publicUrl.replace(/\/$/, "")}/social/v1/communities/${r.community_id}/assets/${r.id}/renditions`;
    return {
      id: r.id,
      community_id: r.community_id,
      owner_actor_id: r.owner_actor_id,
      kind: r.kind,
      status: r.status,
      content_type: r.content_type,
      byte_size: r.byte_size === null ? null : Number(r.byte_size),
      width: r.width === null ? null : Number(r.width),
      height: r.height === null ? null : Number(r.height),
      duration_s: r.duration_s,
      failure_reason: r.failure_reason,
      renditions: (JSON.parse(r.renditions) as store.Rendition[]).map((x) => ({
        name: x.name,
        url: `${base}/${x.name}?expires=${expires}&sig=${this.sign(r.community_id, r.id, x.name, expires)}`,
        content_type: x.content_type,
        width: x.width,
        height: x.height,
        byte_size: x.byte_size,
      })),
      created_at: r.created_at,
      updated_at: r.updated_at,
    };
  }

  async upload(pr: Principal, communityId: string, body: unknown) {
    const c = await this.posts.lane.community(pr, communityId, "social.create");
    const o = (body ?? {}) as { actor_id?: unknown; file?: unknown };
    const file = o.file;
    if (!(file instanceof Blob)) throw badRequest("A file is required", [{ field: "file", reason: "multipart/form-data field 'file'" }]);
    if (file.size === 0) throw badRequest("The file is empty", [{ field: "file", reason: "at least 1 byte" }]);
    if (file.size > ASSET_MAX_BYTES) throw new ApiError(413, "FILE_TOO_LARGE", `Assets are at most ${ASSET_MAX_BYTES} bytes`, [{ field: "file", reason: `at most ${ASSET_MAX_BYTES} bytes` }]);
    const bytes = new Uint8Array(await file.arrayBuffer());
    const now = this.posts.now();
    const id = uuid();
    const key = `social/${c.id}/assets/${id}/upload`;
    const owner = await this.posts.writer(this.posts.lane.ctx.db, c.id, o.actor_id);
    await this.posts.lane.ctx.objects.put(key, bytes, "application/octet-stream");
    const row: store.AssetRow = {
      id, community_id: c.id, owner_actor_id: owner.id, kind: "image", status: "processing", content_type: null, byte_size: bytes.byteLength, width: null, height: null, duration_s: null,
      failure_reason: null, renditions: "[]", object_key: key, lease_until: null, created_at: now, updated_at: now,
    };
    await store.insertAsset(this.posts.lane.ctx.db, row);
    return this.view(row);
  }

  /** Two-step upload, step 1: an asset waiting for its bytes and a signed PUT URL (15 minutes). */
  async createUpload(pr: Principal, communityId: string, body: unknown) {
    const c = await this.posts.lane.community(pr, communityId, "social.create");
    const o = (body ?? {}) as { actor_id?: unknown };
    const owner = await this.posts.writer(this.posts.lane.ctx.db, c.id, o.actor_id);
    const now = this.posts.now();
    const row: store.AssetRow = {
      id: uuid(), community_id: c.id, owner_actor_id: owner.id, kind: "image", status: "uploading", content_type: null, byte_size: null, width: null, height: null, duration_s: null,
      failure_reason: null, renditions: "[]", object_key: null, lease_until: null, created_at: now, updated_at: now,
    };
    await store.insertAsset(this.posts.lane.ctx.db, row);
    const expires = Math.floor(this.posts.lane.ctx.clock.nowMs() / 1000) + UPLOAD_URL_TTL_S;
    const url = `${this.posts.lane.ctx.config.publicUrl.replace(/\/$/, "")}/social/v1/communities/${c.id}/assets/${row.id}/upload?expires=${expires}&sig=${this.sign(c.id, row.id, "upload", expires)}`;
    return { asset: this.view(row), upload_url: url, upload_method: "PUT", upload_expires_at: new Date(expires * 1000).toISOString(), max_bytes: ASSET_MAX_BYTES };
  }

  /** Two-step upload, step 2: the bytes, PUT to the signed URL (no credential); once. */
  async receiveUpload(communityId: string, id: string, q: { expires?: string; sig?: string }, request: Request): Promise<void> {
    this.checkSignature(communityId, id, "upload", q);
    const r = await store.assetById(this.posts.lane.ctx.db, communityId.toLowerCase(), id.toLowerCase());
    if (!r) throw notFound("Asset");
    if (r.status !== "uploading") throw new ApiError(409, "ALREADY_UPLOADED", "The bytes of this asset were already received");
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength === 0) throw badRequest("The body is empty", [{ field: "body", reason: "the file's bytes" }]);
    if (bytes.byteLength > ASSET_MAX_BYTES) throw new ApiError(413, "FILE_TOO_LARGE", `Assets are at most ${ASSET_MAX_BYTES} bytes`, [{ field: "body", reason: `at most ${ASSET_MAX_BYTES} bytes` }]);
    const key = `social/${r.community_id}/assets/${r.id}/upload`;
    await this.posts.lane.ctx.objects.put(key, bytes, "application/octet-stream");
    const n = await store.markUploaded(this.posts.lane.ctx.db, r.id, key, bytes.byteLength, this.posts.now());
    if (n !== 1) throw new ApiError(409, "ALREADY_UPLOADED", "The bytes of this asset were already received");
  }

  private checkSignature(communityId: string, id: string, name: string, q: { expires?: string; sig?: string }): number {
    const expires = Number(q.expires);
    const sig = q.sig ?? "";
    const want = Number.isInteger(expires) ? this.sign(communityId, id, name, expires) : "";
    const ok = want !== "" && sig.length === want.length && timingSafeEqual(Buffer.from(sig), Buffer.from(want));
    if (!ok) throw forbidden("Invalid signature", "INVALID_SIGNATURE");
    if (expires * 1000 <= this.posts.lane.ctx.clock.nowMs()) throw forbidden("The URL has expired", "URL_EXPIRED");
    return expires;
  }

  async get(pr: Principal, communityId: string, id: string) {
    const c = await this.posts.lane.community(pr, communityId, "social.read");
    const r = await store.assetById(this.posts.lane.ctx.db, c.id, id.toLowerCase());
    if (!r) throw notFound("Asset");
    return this.view(r);
  }

  /** The community's assets, newest first (all statuses); `owner_actor_id` narrows to one actor's. */
  async list(pr: Principal, communityId: string, q: { limit?: number; cursor?: string; owner_actor_id?: string }) {
    const c = await this.posts.lane.community(pr, communityId, "social.list");
    const { limit, after } = pageArgs(q);
    // A filter by an actor that does not exist is 404, like every other unknown id.
    const owner = q.owner_actor_id === undefined ? null : (await this.posts.lane.actor(this.posts.lane.ctx.db, c.id, q.owner_actor_id, "owner_actor_id")).id;
    const rows = await store.listAssets(this.posts.lane.ctx.db, c.id, owner, after, limit + 1);
    return page(rows, limit, (r) => ({ k: r.created_at, id: r.id }), (r) => this.view(r));
  }

  /**
   * Deletes an asset and its stored bytes. Posts and comments that attached it keep the
   * reference (as a file deleted from a bucket leaves links to it): reads of it answer 404.
   */
  async remove(pr: Principal, communityId: string, id: string): Promise<void> {
    const c = await this.posts.lane.community(pr, communityId, "social.delete");
    const r = await store.assetById(this.posts.lane.ctx.db, c.id, id.toLowerCase());
    if (!r) throw notFound("Asset");
    await store.deleteAsset(this.posts.lane.ctx.db, r.id);
    await this.deleteObjects(r.object_key, JSON.parse(r.renditions) as store.Rendition[]);
  }

  private async deleteObjects(original: string | null, renditions: store.Rendition[]): Promise<void> {
    for (const key of [original, ...renditions.map((x) => x.key)]) if (key) await this.posts.lane.ctx.objects.delete(key);
  }

  /** Serves a rendition to whoever holds an unexpired signed URL. */
  async rendition(communityId: string, id: string, name: RenditionName, q: { expires?: string; sig?: string }): Promise<Response> {
    // name is never "upload" (the route's schema: RENDITION_NAMES), so an upload URL's signature reads nothing.
    const expires = this.checkSignature(communityId, id, name, q);
    const r = await store.assetById(this.posts.lane.ctx.db, communityId.toLowerCase(), id.toLowerCase());
    const rend = r ? (JSON.parse(r.renditions) as store.Rendition[]).find((x) => x.name === name) : undefined;
    const obj = rend ? await this.posts.lane.ctx.objects.get(rend.key) : null;
    if (!rend || !obj) throw notFound("Rendition");
    return new Response(obj.data as Uint8Array<ArrayBuffer>, {
      headers: { "content-type": rend.content_type, "cache-control": `private, max-age=${Math.max(0, expires - Math.floor(this.posts.lane.ctx.clock.nowMs() / 1000))}`, "x-content-type-options": "nosniff" },
    });
  }

  /** The scheduler's job: process claimed uploads (leases of 5 minutes). */
  async processPending(): Promise<number> {
    const now = this.posts.now();
    const lease = new Date(Date.parse(now) + 300_000).toISOString();
    const claimed = await tx(this.posts.lane.ctx.db, (t) => store.claim(t, now, lease, 10, dialect(t).skipLocked));
    for (const a of claimed) await this.process(a);
    return claimed.length;
  }

  private async process(a: store.AssetRow): Promise<void> {
    let patch: Partial<store.AssetRow>;
    try {
      patch = await this.render(a);
    } catch (e) {
      patch = { status: "failed", failure_reason: e instanceof AssetError ? e.reason : "corrupt_image" };
    }
    const now = this.posts.now();
    const finished = await tx(this.posts.lane.ctx.db, async (t) => {
      if (!(await store.finish(t, a.id, { ...patch, lease_until: null, updated_at: now }))) return false;
      const row = { ...a, ...patch, lease_until: null, updated_at: now } as store.AssetRow;
      await this.posts.emit(t, a.community_id, row.status === "ready" ? "asset.ready" : "asset.failed", this.view(row));
      return true;
    });
    // Deleted while it was being processed: the bytes just written belong to nothing. (Not
    // when another node finished it first: it wrote the same keys, which its row now names.)
    if (!finished && !(await store.assetById(this.posts.lane.ctx.db, a.community_id, a.id))) {
      await this.deleteObjects(patch.object_key ?? a.object_key, patch.renditions ? (JSON.parse(patch.renditions) as store.Rendition[]) : []);
    }
  }

  private async render(a: store.AssetRow): Promise<Partial<store.AssetRow>> {
    const obj = a.object_key ? await this.posts.lane.ctx.objects.get(a.object_key) : null;
    if (!obj) throw new AssetError("missing_upload");
    const sharp = await loadSharp(this.posts.lane.ctx.config.dataDir, this.posts.lane.ctx.log);
    if (!sharp) throw new AssetError("image_processing_unavailable");
    let meta: Awaited<ReturnType<ReturnType<typeof Sharp>["metadata"]>>;
    try {
      meta = await sharp(obj.data).metadata();
    } catch {
      throw new AssetError("unsupported_format");
    }
    const type = meta.format ? FORMATS[meta.format] : undefined;
    if (!type) throw new AssetError("unsupported_format");
    const fmt = meta.format === "heif" ? "avif" : (meta.format as "jpeg" | "png" | "webp" | "gif");
    const base = `social/${a.community_id}/assets/${a.id}`;
    // The original, upright and without metadata (sharp drops EXIF unless asked to keep it).
    const original = await sharp(obj.data).rotate().toFormat(fmt).toBuffer({ resolveWithObject: true });
    await this.posts.lane.ctx.objects.put(`${base}/original.${EXT[type]}`, original.data, type);
    const renditions: store.Rendition[] = [];
    for (const r of RENDITIONS) {
      const outType = r.format === "webp" ? "image/webp" : type;
      const out = await sharp(original.data).resize({ width: r.size, height: r.size, fit: "inside", withoutEnlargement: true }).toFormat(r.format === "webp" ? "webp" : fmt).toBuffer({ resolveWithObject: true });
      const key = `${base}/${r.name}.${EXT[outType]}`;
      await this.posts.lane.ctx.objects.put(key, out.data, outType);
      renditions.push({ name: r.name, key, content_type: outType, width: out.info.width, height: out.info.height, byte_size: out.info.size });
    }
    if (a.object_key) await this.posts.lane.ctx.objects.delete(a.object_key);
    return { status: "ready", content_type: type, width: original.info.width, height: original.info.height, byte_size: original.info.size, renditions: JSON.stringify(renditions), object_key: `${base}/original.${EXT[type]}`, failure_reason: null };
  }
}

class AssetError extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}
