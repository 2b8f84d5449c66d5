/** TypeBox models shared by the platform's features (and the Auth routes), and their OpenAPI description. */
import { t } from "../../core/schema";
import type { TSchema } from "elysia";
import type { TString } from "@sinclair/typebox";
import { JsonObject, ListQuery, Pagination, UUID_PATTERN, Uuid } from "../../access/schemas";
import { FORM_TYPE, JSON_TYPE } from "../../core/request-body";

export { ErrorBody, ListQuery, Pagination } from "../../access/schemas";

// --- Ids a caller names (path, query or body): shared by the Platform and Auth routes --------

/** The house UUID (access/schemas.ts); UUID_BODY is its pattern without anchors, to build "a UUID or ..." patterns. */
export { Uuid };
export const UUID_BODY = UUID_PATTERN.slice(1, -1);

/** A workspace slug (workspaces.ts validateSlug): 1-63 lowercase letters and digits, separated by single hyphens. */
export const WORKSPACE_SLUG_PATTERN = "^[a-z0-9]+(?:-[a-z0-9]+)*$";
export const WORKSPACE_SLUG_MAX = 63;
export const WorkspaceSlug = t.String({
  pattern: WORKSPACE_SLUG_PATTERN,
  maxLength: WORKSPACE_SLUG_MAX,
  description: "The workspace's slug (not its id): 1-63 lowercase letters and digits, separated by single hyphens",
});

/** Path parameters of a workspace's routes: workspace_slug and the named UUID ids. */
export function workspaceParams<K extends string>(...ids: K[]) {
  const props = { workspace_slug: WorkspaceSlug, ...Object.fromEntries(ids.map((k) => [k, Uuid()])) } as { workspace_slug: TString } & Record<K, TString>;
  return t.Object(props);
}

const accountFields = {
  id: t.String({ format: "uuid" }),
  email: t.String(),
  username: t.String(),
  display_name: t.Nullable(t.String()),
  status: t.UnionEnum(["active", "suspended", "deactivated", "blocked"]),
  is_operator: t.Boolean(),
  created_at: t.String({ format: "date-time" }),
};

/** An account as the operator routes show it. */
export const OperatorAccount = t.Object({ ...accountFields, updated_at: t.String({ format: "date-time" }) });
export const OperatorAccountList = t.Object({ data: t.Array(OperatorAccount), pagination: Pagination });

/** GET /v1/introspect: who is calling, and the workspaces they reach. */
export const Introspection = t.Object({
  is_authenticated: t.Literal(true),
  principal: t.Union([
    t.Object({ type: t.Literal("user"), id: t.String({ format: "uuid", description: "Account id" }), session_id: t.String({ format: "uuid" }) }),
    t.Object({ type: t.Literal("personal_token"), id: t.String({ format: "uuid", description: "Account id" }), token_id: t.String({ format: "uuid" }) }),
    t.Object({ type: t.Literal("api_key"), id: t.String({ format: "uuid", description: "API key id" }), workspace_id: t.String({ format: "uuid" }), created_by: t.String({ format: "uuid" }) }),
  ]),
  account: t.Nullable(t.Object(accountFields), { description: "null for a workspace API key" }),
  workspaces: t.Array(
    t.Object({
      id: t.String({ format: "uuid" }),
      slug: t.String(),
      display_name: t.String(),
      role: t.String({ description: "The account's role in the workspace; api_key for a workspace API key" }),
      services: t.Array(t.String()),
      avatar_url: t.Nullable(t.String()),
    }),
    { description: "A workspace API key: its own workspace only" },
  ),
});

export const PolicyStatement = t.Object({
  effect: t.Literal("allow"),
  actions: t.Array(t.String()),
  resources: t.Array(t.String()),
});

// A feature's own models sit in its folder: identity/, workspaces/, keys/ and audit/ schemas.ts.

// --- Federated sign-in: shared by the Platform and Auth routes -----------------------------

/**
 * `detail.requestBody` of a route whose module lists it with OAUTH_FORM_TYPES: the same fields
 * as a form post or as JSON (the generator alone would document JSON only).
 */
export const formOrJsonBody = (schema: TSchema) => ({ required: true, content: { [FORM_TYPE]: { schema }, [JSON_TYPE]: { schema } } });

/** What a provider sends back: query string (idp_2, idp_3) or form post (idp_1); JSON is accepted too. */
export const CallbackFields = t.Object({
  state: t.Optional(t.String({ maxLength: 512, description: "The state minted at start (single use, 10 minutes)" })),
  code: t.Optional(t.String({ maxLength: 4096, description: "Authorization code (exchanged with PKCE)" })),
  id_token: t.Optional(t.String({ maxLength: 16384, description: "An ID token posted directly (idp_1 may); verified like the exchanged one" })),
  user: t.Optional(t.String({ maxLength: 4096, description: "idp_1 only, first sign-in: JSON {name, email}; untrusted, used for the display name only" })),
  error: t.Optional(t.String({ maxLength: 256 })),
  error_description: t.Optional(t.String({ maxLength: 1024 })),
});

/** A provider identity linked to an account (console or App user). */
export const Identity = t.Object({
  id: t.String({ format: "uuid" }),
  provider: t.String({ description: "idp_1 | idp_2 | idp_3 when linked" }),
  issuer: t.String(),
  subject: t.String(),
  email: t.Nullable(t.String({ description: "As the provider reported it when linked" })),
  created_at: t.String({ format: "date-time" }),
  last_used_at: t.Nullable(t.String({ format: "date-time" })),
});
