/** Workspace routes: create, list, read, update, delete, avatar. */
import { Elysia } from "elysia";
import { t } from "../../../../core/schema";
import { principalPlugin } from "../../../../access/http";
import { callerKey, idempotent } from "../../../../access/idempotent";
import { requireHuman, requirePrincipal } from "../../../../access/principal";
import { HUMAN_CALLER, PLATFORM_CALLER, PUBLIC, secured } from "../../../../access/openapi";
import { noContent } from "../../../../core/openapi";
import type { RouteDeps } from "../../route-deps";
import type { WorkspaceService } from "../workspaces";
import { AVATAR_TYPES } from "../workspaces";
import { ErrorBody, ListQuery, Uuid, workspaceParams } from "../../schemas";
import { Workspace, WorkspaceCreate, WorkspaceList, WorkspacePatch } from "../schemas";

const tags = ["Platform: workspaces"];
const slugParam = workspaceParams();

export function workspaceRoutes(platform: RouteDeps & { readonly workspaces: WorkspaceService }) {
  const { workspaces } = platform;
  return new Elysia({ prefix: "/v1" })
    .guard(secured(PUBLIC))
    .get("/avatars/:workspace_id", async ({ params }) => {
      const a = await workspaces.avatar(params.workspace_id);
      return new Response(a.data as Uint8Array<ArrayBuffer>, { headers: { "content-type": a.type, "cache-control": "public, max-age=31536000, immutable", "x-content-type-options": "nosniff" } });
    }, {
      params: t.Object({ workspace_id: Uuid("The workspace's id") }),
      detail: {
        tags,
        summary: "Workspace avatar image (public; URL changes with each upload)",
        responses: { 200: { description: "The image as uploaded (PNG, JPEG or WEBP), cacheable for a year", content: Object.fromEntries(AVATAR_TYPES.map((type) => [type, { schema: { type: "string" as const, format: "binary" } }])) } },
      },
    })
    .use(principalPlugin(platform.authz))
    .guard(secured(PLATFORM_CALLER))
    .post("/workspaces", (c) => {
      const p = requireHuman(c.principal, "Creating a workspace");
      return idempotent(platform.ctx.idempotency, c, callerKey(p), async () => ({ status: 201, body: await workspaces.create(p, c.body, c.meta) }));
    }, {
      body: WorkspaceCreate,
      response: { 201: Workspace, 400: ErrorBody, 403: ErrorBody, 409: ErrorBody },
      detail: { tags, security: HUMAN_CALLER, summary: "Create a workspace (the caller becomes its owner)", description: "Accepts Idempotency-Key. 403 for workspace API keys." },
    })
    .get("/workspaces", ({ principal, query }) => workspaces.list(requirePrincipal(principal), query), {
      query: ListQuery, response: { 200: WorkspaceList, 400: ErrorBody, 401: ErrorBody }, detail: { tags, summary: "Workspaces of the caller (cursor pages)" },
    })
    .get("/workspaces/:workspace_slug", ({ principal, params }) => workspaces.get(requirePrincipal(principal), params.workspace_slug), {
      params: slugParam, response: { 200: Workspace, 404: ErrorBody }, detail: { tags, summary: "Read a workspace (action workspace.read)" },
    })
    .patch("/workspaces/:workspace_slug", ({ principal, params, body, meta }) => workspaces.update(requirePrincipal(principal), params.workspace_slug, body, meta), {
      params: slugParam,
      body: WorkspacePatch,
      response: { 200: Workspace, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody },
      detail: { tags, summary: "Update display name, slug or settings (action workspace.update; emits workspace.renamed on slug change)" },
    })
    .delete("/workspaces/:workspace_slug", async ({ principal, params, meta, set }) => {
      await workspaces.remove(requireHuman(principal, "Deleting a workspace"), params.workspace_slug, meta);
      set.status = 204;
    }, { params: slugParam, detail: { tags, security: HUMAN_CALLER, summary: "Delete a workspace (action workspace.delete; 403 for API keys)", responses: noContent() } })
    .post("/workspaces/:workspace_slug/avatar", ({ principal, params, body, meta }) => workspaces.setAvatar(requirePrincipal(principal), params.workspace_slug, (body as any)?.file, meta), {
      params: slugParam,
      type: "multipart/form-data",
      response: { 200: t.Object({ avatar_url: t.Nullable(t.String()), content_type: t.String(), size: t.Number() }), 400: ErrorBody, 413: ErrorBody, 415: ErrorBody },
      detail: {
        tags,
        summary: "Upload the avatar: PNG, JPEG or WEBP (detected from content), at most 2 MB",
        // No body schema (the file is checked by content, not by Elysia): the document says what to send.
        requestBody: { required: true, content: { "multipart/form-data": { schema: { type: "object", required: ["file"], properties: { file: { type: "string", format: "binary" } } } } } },
      },
    });
}
