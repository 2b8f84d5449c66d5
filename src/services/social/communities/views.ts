/**
 * What the community routes serve: a community row turned into the record of schemas.ts,
 * whose TypeBox model is the type too (one declaration for the documented and the served shape).
 */
import type { Static } from "@sinclair/typebox";
import type { Community } from "./schemas";
import { parseSettings } from "./settings";
import type { CommunityRow } from "./store";

export type CommunityView = Static<typeof Community>;

export const communityView = (r: CommunityRow): CommunityView => ({
  id: r.id,
  workspace_id: r.workspace_id,
  slug: r.slug,
  display_name: r.display_name,
  description: r.description,
  app_id: r.app_id,
  settings: parseSettings(r.settings),
  status: r.status,
  created_at: r.created_at,
  updated_at: r.updated_at,
});
