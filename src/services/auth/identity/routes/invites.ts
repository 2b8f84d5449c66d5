/** Invites: admin create / list / revoke (auth.invite.*) and the public accept-invite. */
import { t } from "../../../../core/schema";
import { APP_ADMIN, PUBLIC } from "../../../../access/openapi";
import { noContent } from "../../../../core/openapi";
import { INVITE_MAX_USES, INVITE_STATUSES, INVITE_TTL } from "../invites";
import type { InviteService } from "../invites";
import { appParams, ConsumerTokens, ErrorBody, ListQuery, Pagination, TenantRef } from "../../schemas";
import { adminCredentials, appGroup, appSlugParams, type AppScopeParts } from "../../apps/scope";

const tags = ["Auth: invites"];
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

const Invite = t.Object({
  id: t.String({ format: "uuid" }),
  code_hint: t.String({ description: "inv_... plus the code's last 4 characters" }),
  email: t.Nullable(t.String({ description: "Only this address may accept" })),
  role: t.Nullable(t.String({ description: "App role of the new user (the App's default when null); also the tenant role for a tenant invite" })),
  tenant_id: t.Nullable(t.String({ format: "uuid" })),
  max_uses: t.Integer(),
  uses: t.Integer(),
  status: t.Union([t.Literal("active"), t.Literal("revoked"), t.Literal("expired"), t.Literal("exhausted")]),
  expires_at: t.Nullable(t.String({ format: "date-time" })),
  revoked_at: t.Nullable(t.String({ format: "date-time" })),
  created_at: t.String({ format: "date-time" }),
});
const CreatedInvite = t.Composite([Invite, t.Object({ code: t.String({ description: "inv_...: shown only in this answer" }) })]);

export function invitesRoutes(auth: AppScopeParts & { invites: InviteService }) {
  const { invites, access } = auth;
  return appGroup(auth, APP_ADMIN)
    .post("/invites", async ({ app, request, body, meta, set }) => {
      const caller = await access.admin(app, adminCredentials(request), "auth.invite.create");
      const created = await invites.create(app, caller.actor, body, meta);
      set.status = 201;
      return created;
    }, {
      params: appSlugParams,
      body: t.Object({
        email: t.Optional(t.Nullable(t.String({ maxLength: 254 }))),
        role: t.Optional(t.Nullable(t.String({ maxLength: 100 }))),
        tenant_id: t.Optional(t.Nullable(TenantRef())),
        max_uses: t.Optional(t.Integer({ minimum: 1, maximum: INVITE_MAX_USES, description: "Default 1; must be 1 when email is set" })),
        expires_in: t.Optional(t.Integer({ minimum: INVITE_TTL.min, maximum: INVITE_TTL.max, description: "Seconds; default 7 days" })),
        send_email: t.Optional(t.Boolean({ description: "Mail the code to email (with the App's mail_from sender)" })),
        accept_url: t.Optional(t.Nullable(t.String({ maxLength: 2048, description: "Link for the mail; ?invite_code=<code> is appended. Its origin must be in allowed_redirect_origins" }))),
      }),
      response: { 201: CreatedInvite, ...errors, 409: ErrorBody, 429: ErrorBody },
      detail: { tags, summary: "Create an invite (action auth.invite.create)", description: "Workspace API key, console session or M2M token. The code (inv_...) is only in this answer. 409 EMAIL_TAKEN when the address already has an account. With send_email: 429 RATE_LIMITED with Retry-After, nothing created, past MAIL_PER_ADDRESS_PER_HOUR (default 50) mail requests from the client address or MAIL_PER_RECIPIENT_PER_HOUR (default 5) invite mails to the address." },
    })
    .get("/invites", async ({ app, request, query }) => {
      await access.admin(app, adminCredentials(request), "auth.invite.list");
      return invites.list(app, query);
    }, {
      params: appSlugParams,
      query: t.Composite([ListQuery, t.Object({ status: t.Optional(t.String({ description: INVITE_STATUSES.join(" | ") })) })]),
      response: { 200: t.Object({ data: t.Array(Invite), pagination: Pagination }), ...errors },
      detail: { tags, summary: "List invites, newest first (action auth.invite.list)" },
    })
    .delete("/invites/:invite_id", async ({ app, request, params, meta, set }) => {
      const caller = await access.admin(app, adminCredentials(request), "auth.invite.delete");
      await invites.revoke(app, caller.actor, params.invite_id, meta);
      set.status = 204;
    }, {
      params: appParams(["invite_id"]),
      detail: { tags, responses: noContent(), summary: "Revoke an invite (action auth.invite.delete)", description: "204; idempotent. Accepting a revoked invite answers 410 INVITE_REVOKED." },
    })
    .post("/auth/accept-invite", ({ app, body, meta }) => invites.accept(app, body, meta), {
      params: appSlugParams,
      body: t.Object({
        code: t.String({ maxLength: 64, description: "The invite code (inv_...)" }),
        password: t.String({ maxLength: 1024, description: "Must satisfy the App's password policy" }),
        username: t.Optional(t.Nullable(t.String({ maxLength: 64, description: "Default: derived from the email's local part" }))),
        display_name: t.Optional(t.Nullable(t.String({ maxLength: 200 }))),
        email: t.Optional(t.Nullable(t.String({ maxLength: 254, description: "Required when the invite names no address (it then stays unverified); otherwise optional and must match" }))),
      }),
      response: { 200: ConsumerTokens, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody, 410: ErrorBody },
      detail: {
        tags: ["Auth: sign-in"],
        security: PUBLIC,
        summary: "Accept an invite: create the account and sign in",
        description: "Public: the code is the only authority. 409 EMAIL_TAKEN / USERNAME_TAKEN; 410 INVITE_REVOKED / INVITE_EXPIRED / INVITE_EXHAUSTED; 404 INVITE_NOT_FOUND for an unknown code.",
      },
    });
}
