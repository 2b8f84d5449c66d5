/** The signed-in end user's profile: GET/PATCH /me, POST /me/password (bearer access token of the App). */
import { t } from "../../../../core/schema";
import { APP_USER } from "../../../../access/openapi";
import { noContent } from "../../../../core/openapi";
import type { MeService } from "../me";
import { ErrorBody, PublicUser } from "../../schemas";
import { andThen } from "../../../../core/maybe-promise";
import { appSlugParams, authz, tokenCheckGroup, type AppScopeParts } from "../../apps/scope";

const tags = ["Auth: me"];
const Me = t.Composite([
  PublicUser,
  t.Object({
    tenants: t.Array(t.Object({
      id: t.String({ format: "uuid" }),
      display_id: t.String(),
      slug: t.String(),
      display_name: t.String(),
      status: t.String({ description: "active | suspended | archived" }),
      role: t.Nullable(t.String({ description: "The user's role in the tenant" })),
    })),
    mfa_enabled: t.Boolean({ description: "An MFA factor is enabled" }),
  }),
]);

export function meRoutes(auth: AppScopeParts & { me: MeService }) {
  const { me } = auth;
  // tokenCheckGroup: a cached App and an already verified token cost no promise on GET /me.
  return tokenCheckGroup(auth, APP_USER)
    .get("/me", ({ app, request }) => andThen(app, (a) => me.get(a, authz(request))), {
      params: appSlugParams,
      response: { 200: Me, 401: ErrorBody, 404: ErrorBody },
      detail: { tags, summary: "The signed-in user's profile, tenants and MFA state" },
    })
    .patch("/me", async ({ app, request, body, meta }) => me.update(await app, authz(request), body, meta), {
      params: appSlugParams,
      body: t.Object({
        display_name: t.Optional(t.Nullable(t.String({ maxLength: 200 }))),
        username: t.Optional(t.String({ maxLength: 64 })),
        // Unknown, not t.Record: Elysia would coerce an array into an object instead of refusing it.
        metadata: t.Optional(t.Unknown({ description: "A JSON object; replaces the whole metadata object (at most 16 KiB of JSON)" })),
      }),
      response: { 200: Me, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody },
      detail: { tags, summary: "Change display name, username or metadata", description: "Emits user.updated with changed_fields. 409 USERNAME_TAKEN." },
    })
    .post("/me/password", async ({ app, request, body, meta, set }) => {
      await me.changePassword(await app, authz(request), body, meta);
      set.status = 204;
    }, {
      params: appSlugParams,
      body: t.Object({ current_password: t.String({ maxLength: 1024 }), new_password: t.String({ maxLength: 1024 }) }),
      detail: { tags, responses: noContent(), summary: "Change the password", description: "204; every other session of the user is revoked, this one stays. 400 INVALID_PASSWORD for a wrong current password; the 5th wrong one within 15 minutes answers 429." },
    });
}
