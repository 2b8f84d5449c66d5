/** Member routes: list, change role, remove/leave (invitations: identity/routes/invitations.ts). */
import { Elysia } from "elysia";
import { t } from "../../../../core/schema";
import { principalPlugin } from "../../../../access/http";
import { requirePrincipal } from "../../../../access/principal";
import { PLATFORM_CALLER, secured } from "../../../../access/openapi";
import { noContent } from "../../../../core/openapi";
import type { RouteDeps } from "../../route-deps";
import type { MemberService } from "../members";
import { ErrorBody, ListQuery, workspaceParams } from "../../schemas";
import { Member, MemberList, MemberPatch } from "../schemas";

const tags = ["Platform: members"];
const slugParam = workspaceParams();
const memberParams = workspaceParams("member_id");
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody };

export function memberRoutes(platform: RouteDeps & { readonly members: MemberService }) {
  const { members } = platform;
  return new Elysia({ prefix: "/v1" })
    .use(principalPlugin(platform.authz))
    .guard(secured(PLATFORM_CALLER))
    .get("/workspaces/:workspace_slug/members", ({ principal, params, query }) => members.list(requirePrincipal(principal), params.workspace_slug, query), {
      params: slugParam,
      query: ListQuery,
      response: { 200: MemberList, ...errors },
      detail: { tags, summary: "List members with their role (action member.list; cursor pages)" },
    })
    .patch("/workspaces/:workspace_slug/members/:member_id", ({ principal, params, body, meta }) => members.updateRole(requirePrincipal(principal), params.workspace_slug, params.member_id, body, meta), {
      params: memberParams,
      body: MemberPatch,
      response: { 200: Member, ...errors },
      detail: {
        tags,
        summary: "Change a member's role (action member.update)",
        description:
          "Only owners grant or take away the owner role (403 OWNER_REQUIRED); the old and the new role must both be within your own policy " +
          "(403 ROLE_EXCEEDS_CALLER); the last owner cannot be demoted (409 LAST_OWNER).",
      },
    })
    .delete("/workspaces/:workspace_slug/members/:member_id", async ({ principal, params, meta, set }) => {
      await members.remove(requirePrincipal(principal), params.workspace_slug, params.member_id, meta);
      set.status = 204;
    }, {
      params: memberParams,
      detail: {
        tags,
        responses: noContent(),
        summary: "Remove a member, or leave (action member.delete; leaving needs none)",
        description: "204. Removing an owner needs an owner; the last owner can neither leave nor be removed (409 LAST_OWNER). The member's API keys stop working.",
      },
    });
}
