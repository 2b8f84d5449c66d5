/**
 * Roles, the permission catalogue, role membership and the token checks of an App
 * (/authorize, /verify, /oauth/introspect). Rules and decisions: see ../rbac.ts.
 */
import { Elysia } from "elysia";
import { t } from "../../../../core/schema";
import { JsonObject } from "../../../../access/schemas";
import { bearerFrom } from "../../../../access/principal";
import { APP_ADMIN, OPTIONAL_APP_TOKEN, PUBLIC } from "../../../../access/openapi";
import { andThen } from "../../../../core/maybe-promise";
import type { RbacService } from "../rbac";
import { Role } from "../schemas";
import { appParams, ErrorBody, formOrJsonBody, ListQuery, Pagination } from "../../schemas";
import { DESCRIPTION_MAX, PERMISSION_MAX_LENGTH, ROLE_PERMISSIONS_MAX, TOKEN_MAX_LENGTH } from "../rbac";
import { adminCredentials, appGroup, appSlugParams, authz, tokenCheckGroup, type AppScopeParts } from "../../apps/scope";

/** The parts of the Auth service these routes use (AuthService passes itself). */
type Parts = AppScopeParts & { rbac: RbacService };

const tags = ["Auth: roles and permissions"];
const checkTags = ["Auth: token checks"];
const adminErrors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const adminNote = "Caller: a workspace API key / console principal with the action in the App's workspace, or an M2M token of the App holding it. Another workspace's key gets 404.";

// Schema bounds are loose on purpose: the service checks the exact limits and names the field.
const Permission = t.Object({ name: t.String(), description: t.String(), created_at: t.String({ format: "date-time" }) });
const Description = t.Optional(t.Nullable(t.String({ maxLength: 4096, description: `At most ${DESCRIPTION_MAX} characters after trimming` })));
const PermissionList = t.Array(t.String({ maxLength: 256 }), {
  maxItems: 1000,
  description: `At most ${ROLE_PERMISSIONS_MAX} entries: registered permissions, resource.* or *`,
});
const roleParams = appParams(["role_id"]);
const Token = t.String({ maxLength: TOKEN_MAX_LENGTH });
const IntrospectionRequest = t.Object({ token: Token, token_type_hint: t.Optional(t.String({ maxLength: 64 })) });

const Introspection = t.Object({
  active: t.Boolean(),
  sub: t.Optional(t.String()),
  client_id: t.Optional(t.String()),
  scope: t.Optional(t.String({ description: "The token's permissions, space-separated" })),
  exp: t.Optional(t.Number()),
  iat: t.Optional(t.Number()),
  iss: t.Optional(t.String()),
  aud: t.Optional(t.Union([t.String(), t.Array(t.String())])),
  jti: t.Optional(t.String()),
  token_type: t.Optional(t.Literal("Bearer")),
  role: t.Optional(t.Nullable(t.String())),
  permissions: t.Optional(t.Array(t.String())),
  type: t.Optional(t.String({ description: "end_user | m2m" })),
  tid: t.Optional(t.String()),
  trole: t.Optional(t.Nullable(t.String())),
});

export function rbacRoutes(auth: Parts) {
  return new Elysia().use(adminRoutes(auth)).use(tokenCheckRoutes(auth));
}

function adminRoutes(auth: Parts) {
  const { rbac } = auth;
  return appGroup(auth, APP_ADMIN)
    // ---------------------------------------------------------------- permission catalogue
    .get("/permissions", ({ app, request, query }) => rbac.listPermissions(app, adminCredentials(request), query), {
      params: appSlugParams,
      query: ListQuery,
      response: { 200: t.Object({ data: t.Array(Permission), pagination: Pagination }), ...adminErrors },
      detail: { tags, summary: "List the App's permission catalogue (action auth.role.read)", description: `Name order, cursor pages. ${adminNote}` },
    })
    .post("/permissions", async ({ app, request, body, meta, set }) => {
      const p = await rbac.createPermission(app, adminCredentials(request), body, meta);
      set.status = 201;
      return p;
    }, {
      params: appSlugParams,
      body: t.Object({ name: t.String({ maxLength: 256 }), description: Description }),
      response: { 201: Permission, ...adminErrors, 409: ErrorBody },
      detail: {
        tags,
        summary: "Register a permission (action auth.role.create)",
        description: `name is resource.action: exactly two lowercase segments [a-z][a-z0-9_-]* joined by a dot, at most ${PERMISSION_MAX_LENGTH} characters; wildcards are not catalogue entries (roles may hold resource.* and *). 409 PERMISSION_EXISTS. ${adminNote}`,
      },
    })
    .delete("/permissions/:name", async ({ app, request, params, meta, set }) => {
      await rbac.deletePermission(app, adminCredentials(request), params.name, meta);
      set.status = 204;
    }, {
      params: appParams([], { name: t.String({ description: "The permission's name (resource.action)" }) }),
      response: { 204: t.Void(), ...adminErrors, 409: ErrorBody },
      detail: {
        tags,
        summary: "Remove a permission from the catalogue (action auth.role.delete)",
        description: "Refused with 409 PERMISSION_IN_USE (details name the roles) while a role lists it literally; wildcards do not count. Roles are never changed silently.",
      },
    })
    // ---------------------------------------------------------------- roles
    .get("/roles", ({ app, request, query }) => rbac.listRoles(app, adminCredentials(request), query), {
      params: appSlugParams,
      query: ListQuery,
      response: { 200: t.Object({ data: t.Array(Role), pagination: Pagination }), ...adminErrors },
      detail: { tags, summary: "List the App's roles (action auth.role.read)", description: `Name order (case-insensitive), cursor pages. ${adminNote}` },
    })
    .post("/roles", async ({ app, request, body, meta, set }) => {
      const r = await rbac.createRole(app, adminCredentials(request), body, meta);
      set.status = 201;
      return r;
    }, {
      params: appSlugParams,
      body: t.Object({ name: t.String({ maxLength: 256 }), description: Description, permissions: t.Optional(PermissionList) }),
      response: { 201: Role, ...adminErrors, 409: ErrorBody },
      detail: {
        tags,
        summary: "Create a role (action auth.role.create)",
        description: `name: 1-64 letters, digits, _ . : -, starting with a letter or digit; unique per App regardless of case (409 ROLE_NAME_TAKEN). permissions: at most ${ROLE_PERMISSIONS_MAX} entries, each a registered permission, resource.* (every action of a resource, also future ones) or *; duplicates are folded, the list is stored sorted.`,
      },
    })
    .get("/roles/:role_id", ({ app, request, params }) => rbac.getRole(app, adminCredentials(request), params.role_id), {
      params: roleParams,
      response: { 200: Role, ...adminErrors },
      detail: { tags, summary: "Read a role (action auth.role.read)" },
    })
    .patch("/roles/:role_id", ({ app, request, params, body, meta }) => rbac.updateRole(app, adminCredentials(request), params.role_id, body, meta), {
      params: roleParams,
      body: t.Object({ name: t.Optional(t.String({ maxLength: 256 })), description: Description, permissions: t.Optional(PermissionList) }),
      response: { 200: Role, ...adminErrors, 409: ErrorBody },
      detail: {
        tags,
        summary: "Change a role's name, description or permissions (action auth.role.update)",
        description: "permissions replaces the whole list. Holders get the new permissions in tokens minted after the change (next refresh or sign-in); tokens already issued keep theirs until they expire. Renaming the App's default_role is refused (409 ROLE_IS_DEFAULT).",
      },
    })
    .delete("/roles/:role_id", async ({ app, request, params, meta, set }) => {
      await rbac.deleteRole(app, adminCredentials(request), params.role_id, meta);
      set.status = 204;
    }, {
      params: roleParams,
      response: { 204: t.Void(), ...adminErrors, 409: ErrorBody },
      detail: {
        tags,
        summary: "Delete a role (action auth.role.delete)",
        description: "Allowed while in use: every holder (app-wide or in a tenant) loses the role and a role.removed event is emitted per holder. The App's default_role cannot be deleted (409 ROLE_IS_DEFAULT): change the setting first.",
      },
    })
    // ---------------------------------------------------------------- membership
    .put("/users/:user_id/role", ({ app, request, params, body, meta }) => rbac.assignRole(app, adminCredentials(request), params.user_id, body.role, meta), {
      params: appParams(["user_id"]),
      body: t.Object({ role: t.Nullable(t.String({ maxLength: 256, description: "Role name (case-insensitive), or null to remove the app-wide role" })) }),
      response: { 200: t.Object({ user_id: t.String(), role: t.Nullable(t.String()) }), ...adminErrors },
      detail: {
        tags,
        summary: "Set or clear a user's app-wide role (action auth.user.update)",
        description: "Emits role.removed (previous role) and role.assigned (new role); setting the role the user already has changes nothing. Unknown role: 400. The user's next refresh or sign-in carries the new role and permissions.",
      },
    });
}

/**
 * The token checks: tokenCheckGroup, so a cached App and an already verified token are
 * answered without a promise (`app` is a MaybePromise, chained with andThen).
 */
function tokenCheckRoutes(auth: Parts) {
  const { rbac } = auth;
  return tokenCheckGroup(auth, APP_ADMIN)
    .post("/authorize", ({ app, request, body }) => andThen(app, (a) => rbac.authorize(a, body.token ?? bearerFrom(authz(request)), body.permission)), {
      params: appSlugParams,
      body: t.Object({ token: t.Optional(Token), permission: t.String({ maxLength: 256 }) }),
      response: { 200: t.Object({ allowed: t.Boolean(), role: t.Nullable(t.String()) }), 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
      detail: {
        tags: checkTags,
        security: OPTIONAL_APP_TOKEN,
        summary: "Does an access token of this App grant a permission?",
        description:
          "No caller credential: the token (body, or Authorization: Bearer) is the authority. Decided from the token's claims alone (stateless, no database read): allowed when its permissions contain the permission, resource.* for its resource, or *. Role changes therefore apply from the holder's next refresh. End-user and M2M tokens are accepted (role is null for M2M). 401 INVALID_TOKEN for an invalid, expired or other App's token; 400 when permission is not a concrete resource.action.",
      },
    })
    .post("/verify", ({ app, request, body }) => andThen(app, (a) => rbac.verify(a, body?.token ?? bearerFrom(authz(request)))), {
      params: appSlugParams,
      body: t.Optional(t.Object({ token: t.Optional(Token) })),
      response: { 200: t.Object({ valid: t.Literal(true), claims: JsonObject() }), 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
      detail: {
        tags: checkTags,
        security: OPTIONAL_APP_TOKEN,
        summary: "Verify an access token (end-user or M2M) of this App",
        description: "Token in the body or as Authorization: Bearer. One offline verification (signature by a published App key, issuer, expiry) with a cache of verified tokens; no database read. 401 INVALID_TOKEN otherwise.",
      },
    })
    .post("/oauth/introspect", ({ app, body }) => andThen(app, (a) => rbac.introspect(a, body.token)), {
      params: appSlugParams,
      body: IntrospectionRequest,
      response: { 200: Introspection, 400: ErrorBody, 404: ErrorBody },
      detail: {
        tags: checkTags,
        security: PUBLIC,
        requestBody: formOrJsonBody(IntrospectionRequest),
        summary: "Token introspection (RFC 7662)",
        description:
          "Body application/x-www-form-urlencoded or JSON: token (required), token_type_hint (ignored: only access tokens are introspected; refresh tokens answer active:false). No caller credential is required: App tokens are self-contained JWTs verifiable by anyone against the public JWKS, so introspection reveals nothing an offline verifier could not learn; an Authorization header is ignored so authenticating RFC clients work too. Invalid, expired or another App's tokens: 200 {active:false}; so are tokens that are revoked although their signature still verifies: an end-user token whose session ended (logout, refresh-token reuse, password reset or change, status change) and an M2M token whose client was deleted or rotated since (one primary-key read). Active: sub, client_id (M2M), scope (permissions space-joined), exp, iat, iss, aud, jti, token_type Bearer, role, permissions, type, tid/trole.",
      },
    });
}
