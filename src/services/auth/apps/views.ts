/**
 * What the App routes serve: a loaded App turned into the record of schemas.ts, whose TypeBox
 * model is the type too (one declaration for the documented and the served shape).
 */
import type { Static } from "@sinclair/typebox";
import type { LoadedApp } from "./loaded";
import type { App } from "./schemas";
import { publicSettings } from "./settings";

export type AppView = Static<typeof App>;

export function appView(a: LoadedApp): AppView {
  return {
    id: a.id,
    workspace_id: a.workspaceId,
    slug: a.slug,
    display_name: a.displayName,
    issuer: a.issuer,
    jwks_uri: `${a.issuer}/v1/.well-known/jwks.json`,
    publishable_key: a.publishableKey,
    // Provider client secrets never leave the server: only their hint.
    settings: publicSettings(a.settings),
    created_at: a.createdAt,
    updated_at: a.updatedAt,
  };
}
