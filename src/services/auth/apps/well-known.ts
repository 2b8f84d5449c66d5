/** The App's public key set and discovery document (no credential). */
import { Elysia } from "elysia";
import { t } from "../../../core/schema";
import { PUBLIC } from "../../../access/openapi";
import type { SigningKeys } from "./keys";
import { ErrorBody } from "../schemas";
import { appGroup, appSlugParams, type AppScopeParts } from "./scope";

const tags = ["Auth: keys and discovery"];

/** Exactly the fields of the spec's discovery document. */
export function discoveryDocument(issuer: string) {
  return {
    issuer,
    jwks_uri: `${issuer}/v1/.well-known/jwks.json`,
    token_endpoint: `${issuer}/v1/oauth/token`,
    introspection_endpoint: `${issuer}/v1/oauth/introspect`,
    userinfo_endpoint: `${issuer}/v1/me`,
    auth_verify_endpoint: `${issuer}/v1/verify`,
    auth_authorize_endpoint: `${issuer}/v1/authorize`,
    auth_admin_users_endpoint: `${issuer}/v1/admin/users`,
    grant_types_supported: ["client_credentials"],
    response_types_supported: ["token"],
    token_endpoint_auth_methods_supported: ["client_secret_post"],
    id_token_signing_alg_values_supported: ["RS256"],
    subject_types_supported: ["public"],
  };
}

const url = (description: string) => t.String({ format: "uri", description });
const DiscoveryDocument = t.Object({
  issuer: url("<auth_base_url>/<app_slug>: the iss of the App's tokens"),
  jwks_uri: url("The App's public signing keys"),
  token_endpoint: url("client_credentials grant"),
  introspection_endpoint: url("RFC 7662 token introspection"),
  userinfo_endpoint: url("The signed-in end user (/me)"),
  auth_verify_endpoint: url("Verify an access token"),
  auth_authorize_endpoint: url("Does a token grant a permission?"),
  auth_admin_users_endpoint: url("Admin user CRUD"),
  grant_types_supported: t.Array(t.String()),
  response_types_supported: t.Array(t.String()),
  token_endpoint_auth_methods_supported: t.Array(t.String()),
  id_token_signing_alg_values_supported: t.Array(t.String()),
  subject_types_supported: t.Array(t.String()),
});

const Jwk = t.Object({ kid: t.String(), kty: t.Literal("RSA"), alg: t.Literal("RS256"), use: t.Literal("sig"), n: t.String(), e: t.String() });

export function wellKnownRoutes(auth: AppScopeParts & { keys: SigningKeys }) {
  return appGroup(auth, PUBLIC)
    .get("/.well-known/jwks.json", ({ app, set }) => {
      set.headers["cache-control"] = "public, max-age=3600";
      return auth.keys.jwks(app.id);
    }, {
      params: appSlugParams,
      response: { 200: t.Object({ keys: t.Array(Jwk) }), 404: ErrorBody },
      detail: { tags, summary: "The App's public signing keys (cacheable for 1 hour; re-fetch on an unknown kid)" },
    })
    .get("/.well-known/openid-configuration", ({ app, set }) => {
      set.headers["cache-control"] = "public, max-age=3600";
      return discoveryDocument(app.issuer);
    }, { params: appSlugParams, response: { 200: DiscoveryDocument, 404: ErrorBody }, detail: { tags, summary: "Discovery document (OAuth 2.0 / OIDC subset)" } });
}
