/** TypeBox models of workspace API keys and personal access tokens (their routes and OpenAPI description). */
import { t } from "../../../core/schema";
import { Pagination, PolicyStatement } from "../schemas";

export const ApiKey = t.Object({
  id: t.String({ format: "uuid" }),
  name: t.String(),
  prefix: t.String({ description: "First 12 characters of the key, for recognising it" }),
  last_four: t.String(),
  policy: t.Array(PolicyStatement),
  created_by: t.String({ format: "uuid" }),
  created_at: t.String({ format: "date-time" }),
  expires_at: t.Nullable(t.String({ format: "date-time" })),
  last_used_at: t.Nullable(t.String({ format: "date-time", description: "Advisory; updated at most once a minute" })),
  revoked_at: t.Nullable(t.String({ format: "date-time" })),
});
export const ApiKeyCreated = t.Composite([
  ApiKey,
  t.Object({ key: t.Nullable(t.String({ description: "svc_live_... — shown only in the first response; null on an Idempotency-Key replay" })) }),
]);
export const ApiKeyList = t.Object({ data: t.Array(ApiKey), pagination: Pagination });
export const ApiKeyCreate = t.Object({
  name: t.String({ minLength: 1, maxLength: 100 }),
  // Statements are validated by validatePolicy (not TypeBox) so unknown fields are rejected, never silently stripped.
  policy: t.Array(t.Unknown(), { description: "Policy statements {effect: allow, actions[], resources[]}; must be covered by your own role policy" }),
  expires_at: t.Optional(t.Nullable(t.String({ description: "ISO 8601 date-time (or date, read as UTC midnight), in the future; omit for a key that does not expire" }))),
});
export const PersonalToken = t.Object({
  id: t.String({ format: "uuid" }),
  name: t.String(),
  prefix: t.String({ description: "First 12 characters of the token" }),
  last_four: t.String(),
  created_at: t.String({ format: "date-time" }),
  expires_at: t.Nullable(t.String({ format: "date-time" })),
  last_used_at: t.Nullable(t.String({ format: "date-time", description: "Updated at most once a minute" })),
  revoked_at: t.Nullable(t.String({ format: "date-time" })),
});
export const PersonalTokenCreated = t.Object({
  id: t.String({ format: "uuid" }),
  name: t.String(),
  token: t.String({ description: "pat_... — shown only in this response" }),
  prefix: t.String(),
  last_four: t.String(),
  created_at: t.String({ format: "date-time" }),
  expires_at: t.Nullable(t.String({ format: "date-time" })),
});
export const PersonalTokenList = t.Object({ data: t.Array(PersonalToken), pagination: Pagination });
export const PersonalTokenCreate = t.Object({
  name: t.String({ minLength: 1, maxLength: 100 }),
  expires_in_days: t.Optional(t.Integer({ minimum: 1, maximum: 365, description: "Default 30" })),
});
