/** The App's public key set and discovery document (no credential). */
import { Elysia } from "elysia";
import { t } from "../../../core/schema";
import { PUBLIC } from "../../../access/openapi";
import type { AuthService } from "../service";
import { ErrorBody } from "../schemas";
import { appGroup } from "./scope";

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

const Jwk = t.Object({ kid: t.String(), kty: t.Literal("RSA"), alg: t.Literal("RS256"), use: t.Literal("sig"), n: t.String(), e: t.String() });

export function wellKnownRoutes(auth: AuthService) {
  return appGroup(auth, PUBLIC)
    .get("/.well-known/jwks.json", ({ app, set }) => {
      set.headers["cache-control"] = "public, max-age=3600";
      return auth.keys.jwks(app.id);
    }, {
      response: { 200: t.Object({ keys: t.Array(Jwk) }), 404: ErrorBody },
      detail: { tags, summary: "The App's public signing keys (cacheable for 1 hour; re-fetch on an unknown kid)" },
    })
    .get("/.well-known/openid-configuration", ({ app, set }) => {
      set.headers["cache-control"] = "public, max-age=3600";
      return discoveryDocument(app.issuer);
    }, { detail: { tags, summary: "Discovery document (OAuth 2.0 / OIDC subset)" } });
}
