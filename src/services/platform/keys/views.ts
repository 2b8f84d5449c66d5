/** An API key and a personal access token as the API shows them: typed by their schemas (keys/schemas.ts). */
import type { Static } from "@sinclair/typebox";
import { isoOrNull } from "../identity/credentials";
import type { ApiKey, PersonalToken } from "./schemas";
import type { ApiKeyRow, PersonalTokenRow } from "./store";

/** Never the secret: only its prefix and last four characters. */
export const apiKeyView = (k: ApiKeyRow): Static<typeof ApiKey> => ({
  id: k.id,
  name: k.name,
  prefix: k.prefix,
  last_four: k.last_four,
  policy: JSON.parse(k.policy),
  created_by: k.created_by,
  created_at: k.created_at,
  expires_at: isoOrNull(k.expires_at),
  last_used_at: k.last_used_at,
  revoked_at: k.revoked_at,
});

export const personalTokenView = (r: PersonalTokenRow): Static<typeof PersonalToken> => ({
  id: r.id,
  name: r.name,
  prefix: r.prefix,
  last_four: r.last_four,
  created_at: r.created_at,
  expires_at: isoOrNull(r.expires_at),
  last_used_at: r.last_used_at,
  revoked_at: r.revoked_at,
});
