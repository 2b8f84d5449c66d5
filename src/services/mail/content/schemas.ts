/** TypeBox models of the content part's routes (brand and templates). */
import { t } from "../../../core/schema";
import { ErrorBody, JsonObject, Pagination } from "../../../access/schemas";
import { params } from "../schemas";
import { BODY_MAX, NAME_RE, SUBJECT_MAX } from "./limits";

export { ErrorBody };

/** A template's name, the key of the /templates/{name} routes (the rule a template is saved under). */
const TemplateName = t.String({ pattern: NAME_RE.source, description: "1-64 of lowercase letters, digits, underscore and hyphen" });
/** The path of /templates/{name} (the sending part's send routes take it too). */
export const TemplateParams = params({ name: TemplateName });

const color = (d: string) => t.String({ description: `${d} (#RRGGBB)`, examples: ["#2563EB"] });
const brandTokens = {
  logo_url: t.Nullable(t.String({ description: "https URL of the logo" })),
  brand_name: t.Nullable(t.String()),
  primary_color: color("Buttons and links"),
  secondary_color: color("Secondary accents"),
  text_color: color("Body text"),
  muted_text_color: color("Footer and muted text"),
  background_color: color("Page background"),
  card_background_color: color("Content card background"),
  font_stack: t.String({ description: "CSS font-family list" }),
  button_radius: t.String({ description: "CSS length (px, em, rem, %)" }),
  container_max_width: t.String({ description: "CSS length (px, em, rem, %)" }),
  footer_html: t.Nullable(t.String({ description: "HTML with inline styles only" })),
  footer_address: t.Nullable(t.String()),
  social_links: t.Record(t.String(), t.String(), { description: "twitter, x, linkedin, github, instagram, facebook, youtube, tiktok, mastodon, bluesky, web -> https URL" }),
  extras: t.Record(t.String(), t.Union([t.String(), t.Number(), t.Boolean()]), { description: "Free tokens, addressable as {{brand.extras.<key>}}" }),
};
const nullableAll = Object.fromEntries(Object.entries(brandTokens).map(([k, v]) => [k, k === "logo_url" || k === "brand_name" || k === "footer_html" || k === "footer_address" ? v : t.Nullable(v)])) as unknown as {
  [K in keyof typeof brandTokens]: ReturnType<typeof t.Nullable>;
};

export const Brand = t.Object({
  resolved: t.Object(brandTokens, { description: "Complete tokens: platform defaults fill the unset ones (brand_name defaults to the workspace's display name)" }),
  raw: t.Object(nullableAll, { description: "User-set values only; null means not customised" }),
});

/**
 * PUT /brand: every field optional; omitted or null resets to the default. Checked in brand.ts
 * (one detail per problem, unknown fields named too: kept through the normaliser by the
 * additionalProperties schema, where `true` lets TypeBox's Clean drop them unseen).
 */
export const BrandPut = t.Object(
  Object.fromEntries(Object.keys(brandTokens).map((k) => [k, t.Optional(t.Unknown())])) as Record<keyof typeof brandTokens, ReturnType<typeof t.Optional>>,
  { additionalProperties: t.Unknown(), description: "Brand tokens (see the Brand resolved object); omitted fields reset to the defaults" },
);

const kind = t.Union([t.Literal("template"), t.Literal("layout"), t.Literal("partial")]);
const templateFields = {
  id: t.String({ format: "uuid" }),
  workspace_id: t.String(),
  name: t.String({ pattern: "^[a-z0-9_-]{1,64}$" }),
  kind,
  subject: t.String(),
  body_html: t.String(),
  body_text: t.String({ description: "As given, or derived from body_html when omitted" }),
  body_text_derived: t.Boolean({ description: "true when no body_text was given: body_text shows the text derived from body_html, and each render derives it again from the rendered HTML. Send it back only if you mean to pin it." }),
  variables_schema: t.Nullable(t.Object({ version: t.Literal(1), vars: JsonObject() })),
  tags: t.Array(t.String()),
  created_at: t.String(),
  updated_at: t.String(),
};
export const Template = t.Object(templateFields);
export const TemplateListItem = t.Object({
  ...templateFields,
  source: t.String({ description: "manual" }),
  source_ref: t.Nullable(t.String()),
  source_synced_at: t.Nullable(t.String()),
});
export const TemplateList = t.Object({ data: t.Array(TemplateListItem), pagination: Pagination });

/**
 * POST /templates. The spec's required fields (name, subject, body_html) and every field's
 * type are checked here, all problems in one 400; the service checks what depends on other
 * fields (subject by kind, tag count after de-duplication, the variables_schema shape).
 */
export const TemplateUpsert = t.Object(
  {
    name: t.String({ pattern: NAME_RE.source, description: "1-64 of lowercase letters, digits, underscore and hyphen" }),
    kind: t.Optional(t.Union([t.Literal("template"), t.Literal("layout"), t.Literal("partial")], { description: "template (default), layout or partial; fixed after the first create" })),
    subject: t.String({ maxLength: SUBJECT_MAX, description: 'Required; "" for layouts and partials' }),
    body_html: t.String({ minLength: 1, maxLength: BODY_MAX, description: "Handlebars HTML" }),
    body_text: t.Optional(t.Nullable(t.String({ maxLength: BODY_MAX, description: "Handlebars text; derived from the HTML when omitted or null" }))),
    variables_schema: t.Optional(t.Nullable(JsonObject({ description: "{version: 1, vars: {name: {type, required, default, options}}} or null" }))),
    tags: t.Optional(t.Nullable(t.Array(t.String({ pattern: "^[a-z0-9_-]{1,64}$" }), { description: "At most 20 distinct tags, each 1-64 of lowercase letters, digits, underscore and hyphen" }))),
  },
  { additionalProperties: true },
);

export const TemplateListQuery = t.Object({
  kind: t.Optional(t.String({ description: "template, layout or partial; other values are ignored" })),
  tags: t.Optional(t.String({ description: "Comma list; a template with any of them matches" })),
  search: t.Optional(t.String({ description: "Case-insensitive substring of the name" })),
  limit: t.Optional(t.QueryInteger({ description: "Default 20; values over 100 are clamped to 100" })),
  cursor: t.Optional(t.String()),
});

export const Tags = t.Object({ data: t.Array(t.String()) });
export const Variables = t.Object({ data: t.Array(t.String(), { description: "Detected expressions, dotted paths, first-occurrence order" }) });

export const RenderBody = t.Object({ data: JsonObject({ description: "Template variables (validated against the template's variables_schema)" }) }, { additionalProperties: true });
export const Rendered = t.Object({ subject: t.String(), html: t.String(), text: t.String() });

export const DraftBody = t.Object(
  {
    subject: t.Optional(t.Nullable(t.String({ maxLength: SUBJECT_MAX }))),
    body_html: t.String({ maxLength: BODY_MAX, description: "Handlebars HTML" }),
    body_text: t.Optional(t.Nullable(t.String({ maxLength: BODY_MAX, description: "Derived from the HTML when omitted" }))),
    data: t.Optional(t.Nullable(JsonObject({ description: "Template variables" }))),
  },
  { additionalProperties: true },
);

export const LintResult = t.Object({
  score: t.Number({ minimum: 0, maximum: 100, description: "90+ looks great, under 70 likely spam-folder" }),
  findings: t.Array(
    t.Object({
      id: t.String(),
      severity: t.Union([t.Literal("error"), t.Literal("warning"), t.Literal("info")]),
      message: t.String(),
      suggestion: t.String(),
    }),
  ),
});
