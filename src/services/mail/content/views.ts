/**
 * What the content routes serve, one serialiser per record: the brand and template rows
 * turned into the records of schemas.ts, whose TypeBox models are the types too (one
 * declaration for the documented and the served shape).
 */
import type { Static } from "@sinclair/typebox";
import { resolveBrand, type BrandRaw } from "./brand";
import { deriveText, type VariablesSchema } from "./render";
import type { Brand, Template, TemplateListItem } from "./schemas";
import type * as store from "./store";

export type BrandView = Static<typeof Brand>;
export type TemplateView = Static<typeof Template>;
export type TemplateListItemView = Static<typeof TemplateListItem>;

/** `displayName`: the workspace's, the default brand_name. */
export const brandView = (raw: BrandRaw, displayName: string | null): BrandView => ({ resolved: resolveBrand(raw, displayName), raw });

export const templateView = (r: store.TemplateRow): TemplateView => ({
  id: r.id,
  workspace_id: r.workspace_id,
  name: r.name,
  kind: r.kind,
  subject: r.subject,
  body_html: r.body_html,
  body_text: r.body_text ?? deriveText(r.body_html),
  body_text_derived: r.body_text === null,
  variables_schema: r.variables_schema ? (JSON.parse(r.variables_schema) as VariablesSchema) : null,
  tags: JSON.parse(r.tags) as string[],
  created_at: r.created_at,
  updated_at: r.updated_at,
});

/** A template in the list: with where it came from. */
export const templateListItemView = (r: store.TemplateRow): TemplateListItemView => ({ ...templateView(r), source: r.source, source_ref: r.source_ref, source_synced_at: r.source_synced_at });
