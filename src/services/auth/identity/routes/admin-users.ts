/**
 * Admin user CRUD: /{app_slug}/v1/admin/users (the discovery document's
 * auth_admin_users_endpoint). Callers: a workspace API key (or console credential) allowed
 * the auth.user.* action, or an M2M token of the App whose permissions cover it.
 */
import { t } from "../../../../core/schema";
import { APP_ADMIN } from "../../../../access/openapi";
import { noContent } from "../../../../core/openapi";
import type { AdminUserService } from "../admin-users";
import { appParams, ErrorBody, ListQuery, Pagination, PublicUser } from "../../schemas";
import { adminCredentials, appGroup, appSlugParams, type AppScopeParts } from "../../apps/scope";

const tags = ["Auth: admin users"];
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const userParams = appParams(["user_id"]);
const Metadata = t.Unknown({ description: "Customer-controlled JSON object, at most 16 KiB (checked by the service: a schema record would let Elysia coerce an array into an object)" });
const AdminSession = t.Object({
  id: t.String(),
  tenant_id: t.Nullable(t.String()),
  amr: t.Array(t.String(), { description: "How the session signed in, e.g. [\"pwd\"], [\"pwd\",\"otp\"]" }),
  mfa_at: t.Nullable(t.String({ description: "Last completed second factor (ISO), or null" })),
  created_at: t.String(),
  expires_at: t.String({ description: "When the refresh token runs out (ISO)" }),
  ip: t.Nullable(t.String()),
  user_agent: t.Nullable(t.String()),
});
const auth401 = "Authorization: Bearer <workspace API key> or <M2M access token of this App>.";

export function adminUsersRoutes(auth: AppScopeParts & { adminUsers: AdminUserService }) {
  const { adminUsers } = auth;
  return appGroup(auth, APP_ADMIN)
    .get("/admin/users", ({ app, request, query }) => adminUsers.list(app, adminCredentials(request), query), {
      params: appSlugParams,
      query: t.Composite([ListQuery, t.Object({ q: t.Optional(t.String({ description: "Substring of the username or an email / phone, any case" })) })]),
      response: { 200: t.Object({ data: t.Array(PublicUser), pagination: Pagination }), ...errors },
      detail: { tags, summary: "List users (action auth.user.list)", description: `Creation order, cursor pages. ${auth401}` },
    })
    .post("/admin/users", async ({ app, request, body, meta, set }) => {
      const user = await adminUsers.create(app, adminCredentials(request), body, meta);
      set.status = 201;
      return user;
    }, {
      params: appSlugParams,
      body: t.Object({
        email: t.String({ maxLength: 254 }),
        username: t.Optional(t.String({ maxLength: 64, description: "Derived from the email when absent" })),
        password: t.Optional(t.String({ maxLength: 1024, description: "Optional; must satisfy the App's password policy" })),
        display_name: t.Optional(t.Nullable(t.String({ maxLength: 200 }))),
        metadata: t.Optional(Metadata),
        role: t.Optional(t.Nullable(t.String({ description: "Role name; the App's default_role when absent" }))),
        email_verified: t.Optional(t.Boolean()),
      }),
      response: { 201: PublicUser, ...errors, 409: ErrorBody },
      detail: { tags, summary: "Create a user (action auth.user.create)", description: `409 EMAIL_TAKEN / USERNAME_TAKEN. Sends user.created. ${auth401}` },
    })
    .get("/admin/users/:user_id", ({ app, request, params }) => adminUsers.get(app, adminCredentials(request), params.user_id), {
      params: userParams,
      response: { 200: PublicUser, ...errors },
      detail: { tags, summary: "Read a user (action auth.user.read)", description: "404 for an unknown id or another App's user." },
    })
    .patch("/admin/users/:user_id", ({ app, request, params, body, meta }) => adminUsers.update(app, adminCredentials(request), params.user_id, body, meta), {
      params: userParams,
      body: t.Object({
        display_name: t.Optional(t.Nullable(t.String({ maxLength: 200 }))),
        username: t.Optional(t.String({ maxLength: 64 })),
        email: t.Optional(t.String({ maxLength: 254, description: "Becomes the primary email, unverified unless email_verified is true" })),
        email_verified: t.Optional(t.Boolean()),
        metadata: t.Optional(Metadata),
        status: t.Optional(t.String({ description: "active | suspended | deactivated | blocked; anything but active revokes every session" })),
        password: t.Optional(t.String({ maxLength: 1024, description: "Sets a new password and revokes every session" })),
        role: t.Optional(t.Nullable(t.String({ description: "Role name, or null to remove the role" }))),
      }),
      response: { 200: PublicUser, ...errors, 409: ErrorBody },
      detail: {
        tags,
        summary: "Change a user (action auth.user.update)",
        description: "Metadata is replaced as a whole. Sends user.updated (changed_fields), user.email_verified, role.removed / role.assigned as they apply. 409 EMAIL_TAKEN / USERNAME_TAKEN.",
      },
    })
    .delete("/admin/users/:user_id", async ({ app, request, params, meta, set }) => {
      await adminUsers.remove(app, adminCredentials(request), params.user_id, meta);
      set.status = 204;
    }, {
      params: userParams,
      response: errors,
      detail: { tags, responses: noContent(), summary: "Delete a user with their sessions, contacts and memberships (action auth.user.delete)", description: "204. Sends user.deleted. Access tokens already issued run out." },
    })
    .get("/admin/users/:user_id/sessions", ({ app, request, params }) => adminUsers.sessions(app, adminCredentials(request), params.user_id), {
      params: userParams,
      response: { 200: t.Object({ data: t.Array(AdminSession) }), ...errors },
      detail: { tags, summary: "List a user's live sessions (action auth.user.read)", description: "Live = not revoked, not expired; newest first, at most 100. 404 for an unknown user." },
    })
    .delete("/admin/users/:user_id/sessions/:session_id", async ({ app, request, params, meta, set }) => {
      await adminUsers.revokeSession(app, adminCredentials(request), params.user_id, params.session_id, meta);
      set.status = 204;
    }, {
      params: appParams(["user_id", "session_id"]),
      response: errors,
      detail: { tags, responses: noContent(), summary: "Revoke one session of a user (action auth.user.update)", description: "204. Its refresh token stops working and its access tokens fail the session check (/me, introspection). 404 when the session is not a live session of this user. Audited (user.session.revoke)." },
    })
    .delete("/admin/users/:user_id/mfa", async ({ app, request, params, meta, set }) => {
      await adminUsers.resetMfa(app, adminCredentials(request), params.user_id, meta);
      set.status = 204;
    }, {
      params: userParams,
      response: errors,
      detail: { tags, responses: noContent(), summary: "Reset a user's MFA (action auth.user.update)", description: "204. Removes every MFA factor, recovery code and open MFA challenge of the user, so the next sign-in needs the password only; the user can enrol again. Sessions stay. Audited (mfa.reset)." },
    });
}
