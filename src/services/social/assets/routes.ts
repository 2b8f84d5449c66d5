/** Routes of assets: upload, read, and the signed (credential-free) rendition reads. */
import { Elysia } from "elysia";
import { t } from "../../../core/schema";
import { PUBLIC, secured } from "../../../access/openapi";
import { requirePrincipal } from "../../../access/principal";
import { noContent } from "../../../core/openapi";
import { IDEMPOTENT, LANE_PREFIX, laneBase, write, type LaneRouteDeps } from "../core/routes";
import { CommunityParams, ErrorBody, errors, laneParams, OneOf, Pagination, PageQuery, Uuid, UuidOut } from "../core/schemas";
import { ASSET_MAX_BYTES, RENDITION_NAMES, type AssetService } from "./service";

const tags = ["Community: assets"];

/** A rendition's name, in an asset and in the path of its signed URL (the upload URL's "upload" is none: 400). */
const RenditionName = OneOf(RENDITION_NAMES, "The rendition");

const Asset = t.Object({
  id: UuidOut(),
  community_id: UuidOut(),
  owner_actor_id: UuidOut(),
  kind: t.String({ description: "image" }),
  status: t.String({ description: "uploading (two-step, waiting for the bytes) | processing | ready | failed" }),
  content_type: t.Nullable(t.String({ description: "Sniffed from the bytes once processed" })),
  byte_size: t.Nullable(t.Integer()),
  width: t.Nullable(t.Integer()),
  height: t.Nullable(t.Integer()),
  duration_s: t.Nullable(t.Number()),
  failure_reason: t.Nullable(t.String({ description: "unsupported_format | corrupt_image | missing_upload | image_processing_unavailable" })),
  renditions: t.Array(
    t.Object({ name: RenditionName, url: t.String({ description: "Signed, expires after 1 h" }), content_type: t.String(), width: t.Integer(), height: t.Integer(), byte_size: t.Integer() }),
  ),
  created_at: t.String(),
  updated_at: t.String(),
});

export function assetRoutes(assets: AssetService, deps: LaneRouteDeps) {
  const signed = new Elysia({ prefix: LANE_PREFIX })
    .guard(secured(PUBLIC))
    .put("/assets/:asset_id/upload", async (c) => {
      await assets.receiveUpload(c.params.community_id, c.params.asset_id, c.query, c.request);
      c.set.status = 204;
    }, {
      params: laneParams("asset_id"),
      query: t.Object({ expires: t.Optional(t.String()), sig: t.Optional(t.String()) }),
      parse: "none",
      response: { 400: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 413: ErrorBody },
      detail: {
        tags,
        summary: "Two-step upload, step 2: PUT the raw bytes to the signed upload_url (public: the signature is the credential); 204",
        description: "Any content type (the format is sniffed from the bytes); at most 10 MiB (413). 403 INVALID_SIGNATURE or URL_EXPIRED; 409 ALREADY_UPLOADED. The asset then moves to processing.",
        requestBody: { required: true, content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } } },
        responses: noContent(),
      },
    })
    .get("/assets/:asset_id/renditions/:name", (c) => assets.rendition(c.params.community_id, c.params.asset_id, c.params.name, c.query), {
      params: t.Object({ ...laneParams("asset_id").properties, name: RenditionName }),
      query: t.Object({ expires: t.Optional(t.String()), sig: t.Optional(t.String()) }),
      response: { 403: ErrorBody, 404: ErrorBody },
      detail: {
        tags,
        summary: "A rendition's bytes (public: the signed URL from the asset is the credential)",
        description: "403 INVALID_SIGNATURE or URL_EXPIRED.",
        responses: { 200: { description: "The image", content: { "image/*": { schema: { type: "string", format: "binary" } } } } },
      },
    });
  return new Elysia().use(signed).use(
    laneBase(deps)
      .post("/assets", (c) => assets.upload(requirePrincipal(c.principal), c.params.community_id, c.body).then((a) => ((c.set.status = 201), a)), {
        params: CommunityParams,
        type: "multipart/form-data",
        response: { 201: Asset, ...errors, 413: ErrorBody },
        detail: {
          tags,
          summary: `Upload an image, at most ${ASSET_MAX_BYTES} bytes (action social.create)`,
          description: "Fields actor_id (owner) and file. 201 with status processing; the scheduler makes the renditions and emits asset.ready or asset.failed (failure_reason).",
          requestBody: {
            required: true,
            content: { "multipart/form-data": { schema: { type: "object", required: ["actor_id", "file"], properties: { actor_id: Uuid("Owner (active)"), file: { type: "string", format: "binary" } } } } },
          },
        },
      })
      .post("/assets/uploads", (c) => write(deps, c, 201, (p) => assets.createUpload(p, c.params.community_id, c.body)), {
        params: CommunityParams,
        body: t.Object({ actor_id: Uuid("Owner (active)") }),
        response: { 201: t.Object({ asset: Asset, upload_url: t.String({ description: "Signed; PUT the bytes here within 15 minutes" }), upload_method: t.String(), upload_expires_at: t.String(), max_bytes: t.Integer() }), ...errors, 409: ErrorBody },
        detail: { tags, summary: "Two-step upload, step 1: an asset in status uploading and its signed upload URL (action social.create)", description: IDEMPOTENT.trim() },
      })
      .get("/assets", (c) => assets.list(requirePrincipal(c.principal), c.params.community_id, c.query), {
        params: CommunityParams,
        query: t.Object({ ...PageQuery.properties, owner_actor_id: t.Optional(Uuid("Only this actor's assets")) }),
        response: { 200: t.Object({ data: t.Array(Asset), pagination: Pagination }), ...errors },
        detail: { tags, summary: "Assets of the community, newest first, in every status (action social.list)" },
      })
      .get("/assets/:asset_id", (c) => assets.get(requirePrincipal(c.principal), c.params.community_id, c.params.asset_id), {
        params: laneParams("asset_id"),
        response: { 200: Asset, ...errors },
        detail: { tags, summary: "Read an asset with freshly signed rendition URLs (action social.read)" },
      })
      .delete("/assets/:asset_id", async (c) => {
        await assets.remove(requirePrincipal(c.principal), c.params.community_id, c.params.asset_id);
        c.set.status = 204;
      }, {
        params: laneParams("asset_id"),
        response: errors,
        detail: {
          tags,
          summary: "Delete an asset and its renditions (action social.delete); 204",
          description: "Posts and comments that attached it keep the reference; reads of the asset and its signed URLs then answer 404.",
          responses: noContent(),
        },
      }),
  );
}
