/** The signed-in end user's provider identities: /me/identities (bearer access token of the App). */
import { t } from "../../../../core/schema";
import { APP_USER } from "../../../../access/openapi";
import { noContent } from "../../../../core/openapi";
import type { IdentityService } from "../identities";
import { appParams, ErrorBody, Identity, Pagination } from "../../schemas";
import { appGroup, appSlugParams, authz, type AppScopeParts } from "../../apps/scope";

const tags = ["Auth: me"];

export function identitiesRoutes(auth: AppScopeParts & { identities: IdentityService }) {
  const { identities } = auth;
  return appGroup(auth, APP_USER)
    .get("/me/identities", ({ app, request }) => identities.list(app, authz(request)), {
      params: appSlugParams,
      response: { 200: t.Object({ data: t.Array(Identity), pagination: Pagination }), 401: ErrorBody, 404: ErrorBody },
      detail: { tags, summary: "Provider identities linked to the signed-in user (all of them, one page)" },
    })
    .delete("/me/identities/:identity_id", async ({ app, request, params, meta, set }) => {
      await identities.unlink(app, authz(request), params.identity_id, meta);
      set.status = 204;
    }, {
      params: appParams(["identity_id"]),
      detail: { tags, responses: noContent(), summary: "Unlink a provider identity", description: "204; 404 for an identity of another user; 409 LAST_SIGN_IN_METHOD when it is the user's only way to sign in (no password, no other identity)." },
    });
}
