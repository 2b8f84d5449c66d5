/** Invitation routes: invite, list, revoke, accept (mounted right after the member routes, under the same tag). */
import { Elysia } from "elysia";
import { principalPlugin } from "../../../../access/http";
import { callerKey, idempotent } from "../../../../access/idempotent";
import { requireHuman, requirePrincipal } from "../../../../access/principal";
import { HUMAN_CALLER, PLATFORM_CALLER, secured } from "../../../../access/openapi";
import { noContent } from "../../../../core/openapi";
import type { RouteDeps } from "../../route-deps";
import type { InvitationService } from "../invitations";
import { ErrorBody, ListQuery, workspaceParams } from "../../schemas";
import { Invitation, InvitationAccept, InvitationAccepted, InvitationCreate, InvitationList } from "../schemas";

const tags = ["Platform: members"];
const slugParam = workspaceParams();
const invitationParams = workspaceParams("invitation_id");
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody };

/** Idempotency keys are per caller: a person, or one API key. */
export function invitationRoutes(platform: RouteDeps & { readonly invitations: InvitationService }) {
  const { invitations } = platform;
  return new Elysia({ prefix: "/v1" })
    .use(principalPlugin(platform.authz))
    .guard(secured(PLATFORM_CALLER))
    .post("/workspaces/:workspace_slug/invitations", (c) => {
      const p = requirePrincipal(c.principal);
      return idempotent(platform.ctx.idempotency, c, callerKey(p), async () => ({ status: 201, body: await invitations.create(p, c.params.workspace_slug, c.body, c.meta) }));
    }, {
      params: slugParam,
      body: InvitationCreate,
      response: { 201: Invitation, ...errors, 429: ErrorBody },
      detail: {
        tags,
        summary: "Invite an email address (action member.create)",
        description:
          "Mails a single-use link valid 7 days (the token is only in the mail). Re-inviting an address with a pending invitation replaces it. " +
          "409 ALREADY_MEMBER when the address belongs to a member; the role must be within your own policy. Accepts Idempotency-Key. " +
          "429 RATE_LIMITED with Retry-After (nothing created) past MAIL_PER_ADDRESS_PER_HOUR (default 50) mail requests from the client address, or MAIL_PER_RECIPIENT_PER_HOUR (default 5) invitations to the address from all workspaces.",
      },
    })
    .get("/workspaces/:workspace_slug/invitations", ({ principal, params, query }) => invitations.list(requirePrincipal(principal), params.workspace_slug, query), {
      params: slugParam,
      query: ListQuery,
      response: { 200: InvitationList, ...errors },
      detail: { tags, summary: "Pending invitations (action member.list; cursor pages)" },
    })
    .delete("/workspaces/:workspace_slug/invitations/:invitation_id", async ({ principal, params, meta, set }) => {
      await invitations.revoke(requirePrincipal(principal), params.workspace_slug, params.invitation_id, meta);
      set.status = 204;
    }, { params: invitationParams, detail: { tags, summary: "Revoke a pending invitation (action member.delete; 204)", responses: noContent() } })
    .post("/invitations/accept", async ({ principal, body, meta, set }) => {
      const r = await invitations.accept(requireHuman(principal, "Accepting an invitation"), body.token, meta);
      set.status = 201;
      return r;
    }, {
      body: InvitationAccept,
      response: { 201: InvitationAccepted, ...errors },
      detail: {
        tags,
        security: HUMAN_CALLER,
        summary: "Accept an invitation as the signed-in user",
        description:
          "Your account email must be the invited address. Unknown, expired, revoked or used tokens and a different account all answer " +
          "404 INVITATION_NOT_FOUND; 409 ALREADY_MEMBER when you already belong to the workspace.",
      },
    });
}
