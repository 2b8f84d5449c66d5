/** Service activation routes: which services a workspace has switched on. */
import { Elysia } from "elysia";
import { t } from "../../../../core/schema";
import { principalPlugin } from "../../../../access/http";
import { requirePrincipal } from "../../../../access/principal";
import { PLATFORM_CALLER, secured } from "../../../../access/openapi";
import type { RouteDeps } from "../../route-deps";
import type { WorkspaceServiceActivation } from "../workspace-services";
import { ErrorBody, workspaceParams } from "../../schemas";
import { WorkspaceServiceItem, WorkspaceServiceList } from "../schemas";

const tags = ["Platform: services"];
const serviceParams = t.Composite([workspaceParams(), t.Object({ service: t.String() })]);
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

export function workspaceServiceRoutes(platform: RouteDeps & { readonly workspaceServices: WorkspaceServiceActivation }) {
  const { workspaceServices } = platform;
  return new Elysia({ prefix: "/v1/workspaces/:workspace_slug/services" })
    .use(principalPlugin(platform.authz))
    .guard(secured(PLATFORM_CALLER))
    .get("", ({ principal, params }) => workspaceServices.list(requirePrincipal(principal), params.workspace_slug), {
      params: workspaceParams(),
      response: { 200: WorkspaceServiceList, ...errors },
      detail: { tags, summary: "The service catalogue with each service's state in this workspace (action service.list)" },
    })
    .put("/:service", ({ principal, params, meta }) => workspaceServices.enable(requirePrincipal(principal), params.workspace_slug, params.service, meta), {
      params: serviceParams,
      response: { 200: WorkspaceServiceItem, ...errors },
      detail: { tags, summary: "Enable a service (action service.update; enabling an enabled service changes nothing)" },
    })
    .delete("/:service", ({ principal, params, meta }) => workspaceServices.disable(requirePrincipal(principal), params.workspace_slug, params.service, meta), {
      params: serviceParams,
      response: { 200: WorkspaceServiceItem, ...errors },
      detail: { tags, summary: "Disable a service (action service.update); its routes answer 403 SERVICE_NOT_ENABLED for this workspace. platform cannot be disabled (400)" },
    });
}
