/** Role routes: built-in and custom roles of a workspace. */
import { Elysia } from "elysia";
import { t } from "../../../../core/schema";
import { principalPlugin } from "../../../../access/http";
import { requirePrincipal } from "../../../../access/principal";
import { PLATFORM_CALLER, secured } from "../../../../access/openapi";
import { noContent } from "../../../../core/openapi";
import type { RouteDeps } from "../../route-deps";
import type { RoleService } from "../roles";
import { ErrorBody, ListQuery, workspaceParams } from "../../schemas";
import { Role, RoleCreate, RoleList, RolePatch } from "../schemas";

const tags = ["Platform: roles"];
const slugParam = workspaceParams();
const roleParams = workspaceParams("role_id");
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody };
const within = "The policy must use registered actions and stay within your own policy (403 ROLE_EXCEEDS_CALLER).";

export function roleRoutes(platform: RouteDeps & { readonly roles: RoleService }) {
  const { roles } = platform;
  return new Elysia({ prefix: "/v1/workspaces/:workspace_slug/roles" })
    .use(principalPlugin(platform.authz))
    .guard(secured(PLATFORM_CALLER))
    .get("", ({ principal, params, query }) => roles.list(requirePrincipal(principal), params.workspace_slug, query), {
      params: slugParam,
      query: ListQuery,
      response: { 200: RoleList, ...errors },
      detail: { tags, summary: "Built-in roles (owner, admin, member) first, then the workspace's custom roles (action role.list; cursor pages)" },
    })
    .get("/:role_id", ({ principal, params }) => roles.get(requirePrincipal(principal), params.workspace_slug, params.role_id), {
      params: roleParams,
      response: { 200: Role, ...errors },
      detail: { tags, summary: "Read a role (action role.read); another workspace's role is 404" },
    })
    .post("", async ({ principal, params, body, meta, set }) => {
      const r = await roles.create(requirePrincipal(principal), params.workspace_slug, body, meta);
      set.status = 201;
      return r;
    }, {
      params: slugParam,
      body: RoleCreate,
      response: { 201: Role, ...errors },
      detail: { tags, summary: "Create a custom role (action role.create)", description: `409 ROLE_NAME_TAKEN when the name exists (built-ins included). ${within}` },
    })
    .patch("/:role_id", ({ principal, params, body, meta }) => roles.update(requirePrincipal(principal), params.workspace_slug, params.role_id, body, meta), {
      params: roleParams,
      body: RolePatch,
      response: { 200: Role, ...errors },
      detail: { tags, summary: "Update a custom role (action role.update)", description: `Built-in roles are read-only (403 BUILTIN_ROLE). ${within} Members holding the role get the new policy on their next request.` },
    })
    .delete("/:role_id", async ({ principal, params, meta, set }) => {
      await roles.remove(requirePrincipal(principal), params.workspace_slug, params.role_id, meta);
      set.status = 204;
    }, {
      params: roleParams,
      detail: { tags, responses: noContent(), summary: "Delete a custom role (action role.delete; 204)", description: "409 ROLE_IN_USE while members hold it or pending invitations offer it; 403 BUILTIN_ROLE for built-ins." },
    });
}
