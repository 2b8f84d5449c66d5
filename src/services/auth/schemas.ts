/** TypeBox models shared by the Auth routes and their OpenAPI description. */
import type { TString } from "@sinclair/typebox";
import { t } from "../../core/schema";
import { JsonObject } from "../../access/schemas";
import { UUID_BODY, Uuid } from "../platform/schemas";
export { CallbackFields, formOrJsonBody, Identity, Uuid } from "../platform/schemas";
export { ErrorBody, ListQuery, Pagination } from "../../access/schemas";

// --- Ids a caller names: each one's shape, checked by the route schema before any lookup ---

/** `^(a|b)$`: a value of one of the alternatives. */
const eitherPattern = (...alternatives: string[]) => `^(${alternatives.join("|")})$`;

/**
 * An App's slug in a path: the slug rules of apps/service.ts (SLUG_RE) in any case, because the App
 * is looked up case-insensitively (bySlug lowercases).
 */
export const AppSlug = t.String({ pattern: "^[A-Za-z][A-Za-z0-9-]{1,61}[A-Za-z0-9]$", description: "The App's slug (3-63 letters, digits and hyphens, starting with a letter)" });

/** A tenant by its UUID or its display id (identity/tenants.ts: displayId("tnt"), tnt_ + 12 lowercase hex). */
export const TenantRef = (description = "Tenant UUID or tnt_ display id") => t.String({ pattern: eitherPattern(UUID_BODY, "tnt_[0-9a-f]{12}"), description });

/** An M2M client by its UUID or its client_id (m2m/service.ts: m2m_ + 24 base62 characters). */
export const M2mClientRef = t.String({ pattern: eitherPattern(UUID_BODY, "m2m_[0-9A-Za-z]{24}"), description: "The client's id (UUID) or its client_id (m2m_...)" });

/**
 * Path parameters of the /{app_slug}/v1 routes: app_slug and the named UUID ids; `extra` for
 * parameters of another shape (a tenant reference, a permission name).
 */
export function appParams<K extends string, E extends Record<string, TString> = Record<never, TString>>(ids: K[] = [], extra?: E) {
  const props = { app_slug: AppSlug, ...Object.fromEntries(ids.map((k) => [k, Uuid()])), ...extra } as { app_slug: TString } & Record<K, TString> & E;
  return t.Object(props);
}

export const ConsumerTokens = t.Object({
  access_token: t.String({ description: "RS256 JWT signed with the App key: sub, role, permissions[], type=end_user; tid/trole when a tenant was selected; amr, mfa_at after MFA" }),
  refresh_token: t.String({ description: "Rotating refresh token; every use revokes it, reuse of a rotated one revokes the session" }),
  token_type: t.Literal("Bearer"),
  expires_in: t.Number({ description: "Access-token lifetime, seconds" }),
});

export const MfaChallenge = t.Object({
  mfa_required: t.Literal(true),
  mfa_token: t.String({ format: "uuid" }),
  factors: t.Array(t.Object({ id: t.String({ format: "uuid" }), type: t.String({ description: "totp | email" }) }, { additionalProperties: t.Unknown() })),
  expires_at: t.Optional(t.String({ format: "date-time" })),
}, { additionalProperties: t.Unknown() });

export const PublicUser = t.Object({
  id: t.String({ format: "uuid" }),
  app_id: t.String({ format: "uuid" }),
  username: t.String(),
  email: t.Nullable(t.String()),
  email_verified: t.Boolean(),
  display_name: t.Nullable(t.String()),
  role: t.Nullable(t.String()),
  status: t.String({ description: "active | suspended | deactivated | blocked" }),
  metadata: JsonObject(),
  created_at: t.String({ format: "date-time" }),
  updated_at: t.String({ format: "date-time" }),
});
