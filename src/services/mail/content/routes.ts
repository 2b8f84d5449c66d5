/** Routes of the content part: /mail/v1/workspaces/{workspace_id}/brand and /templates... */
import { Elysia } from "elysia";
import { principalPlugin } from "../../../access/http";
import { PLATFORM_CALLER, secured } from "../../../access/openapi";
import { requirePrincipal } from "../../../access/principal";
import { noContent } from "../../../core/openapi";
import type { ServiceDeps } from "../../../kernel/module";
import { WorkspaceParams } from "../schemas";
import { Brand, BrandPut, DraftBody, ErrorBody, LintResult, RenderBody, Rendered, Tags, Template, TemplateList, TemplateListQuery, TemplateParams, TemplateUpsert, Variables } from "./schemas";
import type { ContentService, DraftInput, TemplateInput } from "./service";

const brandTags = ["Mail: brand"];
const tplTags = ["Mail: templates"];
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const ws = WorkspaceParams;
const named = TemplateParams;
const draftErrors =
  "400 VALIDATION_ERROR (one detail per problem), TEMPLATE_SYNTAX_ERROR, TEMPLATE_RECURSION (a template that includes itself, directly or through partials), TEMPLATE_PARTIAL_NOT_FOUND or TEMPLATE_RENDER_ERROR.";

export function contentRoutes(content: ContentService, deps: ServiceDeps) {
  return new Elysia({ prefix: "/mail/v1/workspaces/:workspace_id" })
    .use(principalPlugin(deps.tenancy.authz))
    .guard(secured(PLATFORM_CALLER))
    .get("/brand", (c) => content.getBrand(requirePrincipal(c.principal), c.params.workspace_id), {
      params: ws,
      response: { 200: Brand, ...errors },
      detail: { tags: brandTags, summary: "Read the brand (action mail.brand.read)", description: "resolved: every token, platform defaults for unset ones; raw: the user-set values, null when not customised." },
    })
    .put("/brand", (c) => content.putBrand(requirePrincipal(c.principal), c.params.workspace_id, c.body, c.meta), {
      params: ws,
      body: BrandPut,
      response: { 200: Brand, ...errors },
      detail: {
        tags: brandTags,
        summary: "Replace the brand (action mail.brand.write)",
        description:
          "Replaces every token: omitted fields reset to the defaults. 400 with one detail per problem: colours #RRGGBB, CSS lengths, https URLs, unknown social_links keys (the message names the valid set), footer_html with scripts, <style>, external CSS, event handlers or other markup that would be stripped.",
      },
    })
    .delete("/brand", async (c) => {
      await content.deleteBrand(requirePrincipal(c.principal), c.params.workspace_id, c.meta);
      c.set.status = 204;
    }, {
      params: ws,
      detail: { tags: brandTags, summary: "Reset the brand to the defaults (action mail.brand.write); 204", responses: noContent() },
    })
    .post("/templates", async (c) => {
      const r = await content.upsert(requirePrincipal(c.principal), c.params.workspace_id, c.body as TemplateInput, c.meta);
      c.set.status = 201;
      return r;
    }, {
      params: ws,
      body: TemplateUpsert,
      response: { 201: Template, ...errors, 409: ErrorBody },
      detail: {
        tags: tplTags,
        summary: "Create or replace a template by name (action mail.template.write)",
        description: `Upsert on (workspace, name), 201 both ways; omitted fields reset. 409 TEMPLATE_KIND_IMMUTABLE when kind differs from the saved one. ${draftErrors}`,
      },
    })
    .get("/templates", (c) => content.list(requirePrincipal(c.principal), c.params.workspace_id, c.query), {
      params: ws,
      query: TemplateListQuery,
      response: { 200: TemplateList, ...errors },
      detail: { tags: tplTags, summary: "List templates, name ascending (action mail.template.read)", description: "Filters kind (unrecognised values ignored), tags (any of a comma list), search (name substring); limit default 20, clamped to 100." },
    })
    .get("/templates/tags", (c) => content.tags(requirePrincipal(c.principal), c.params.workspace_id), {
      params: ws,
      response: { 200: Tags, ...errors },
      detail: { tags: tplTags, summary: "Every tag in use, sorted (action mail.template.read)" },
    })
    .post("/templates/preview", (c) => content.preview(requirePrincipal(c.principal), c.params.workspace_id, c.body as DraftInput), {
      params: ws,
      body: DraftBody,
      response: { 200: Rendered, ...errors },
      detail: { tags: tplTags, summary: "Render a draft with the brand and every layout and partial (action mail.template.read)", description: draftErrors },
    })
    .post("/templates/lint", (c) => content.lint(requirePrincipal(c.principal), c.params.workspace_id, c.body as DraftInput), {
      params: ws,
      body: DraftBody,
      response: { 200: LintResult, ...errors },
      detail: {
        tags: tplTags,
        summary: "Lint a draft: score 0-100 and findings, errors first (action mail.template.read)",
        description: `90+ looks great, under 70 likely spam-folder. Rules and weights: the Mail guide (/docs/guides/mail), "Lint rules". ${draftErrors}`,
      },
    })
    .get("/templates/:name", (c) => content.get(requirePrincipal(c.principal), c.params.workspace_id, c.params.name), {
      params: named,
      response: { 200: Template, ...errors },
      detail: { tags: tplTags, summary: "Read a template (action mail.template.read)" },
    })
    .delete("/templates/:name", async (c) => {
      await content.remove(requirePrincipal(c.principal), c.params.workspace_id, c.params.name, c.meta);
      c.set.status = 204;
    }, {
      params: named,
      detail: { tags: tplTags, summary: "Delete a template (action mail.template.write); 204", responses: noContent() },
    })
    .post("/templates/:name/render", (c) => content.render(requirePrincipal(c.principal), c.params.workspace_id, c.params.name, c.body as { data?: unknown }), {
      params: named,
      body: RenderBody,
      response: { 200: Rendered, ...errors },
      detail: { tags: tplTags, summary: "Render a saved template with data (action mail.template.read)", description: `data is validated against variables_schema (400, one detail per problem). ${draftErrors}` },
    })
    .get("/templates/:name/variables", (c) => content.variables(requirePrincipal(c.principal), c.params.workspace_id, c.params.name), {
      params: named,
      response: { 200: Variables, ...errors },
      detail: {
        tags: tplTags,
        summary: "Variables the template uses (action mail.template.read)",
        description: "From the Handlebars AST: dotted paths, first-occurrence order, included partials walked in place; helpers, partial names, @data, this and brand tokens left out.",
      },
    });
}
