/**
 * The content part's operations: the workspace brand and its templates (templates, layouts,
 * partials), their rendering, preview, lint and variables. renderForSend() is what the
 * sending part (messages/) calls.
 *
 * Decisions the spec leaves open (also in docs/mail.md, "Reference" > "Brand and templates"):
 * - POST /templates answers 201 on create and on replace (the upsert is idempotent);
 *   a replace resets omitted fields (body_text, variables_schema, tags) like PUT /brand.
 * - subject is required and non-empty for kind template, and must be "" for layouts and
 *   partials; subject up to 998 characters, body_html and body_text up to 500,000.
 * - tags: up to 20, each 1-64 characters of [a-z0-9_-] (stored as given, de-duplicated).
 * - body_text omitted: the response shows the text derived from body_html; renders derive it
 *   from the rendered HTML.
 * - Saving checks the syntax of every field and refuses an include cycle (400
 *   TEMPLATE_RECURSION); an included layout or partial that does not exist yet is allowed
 *   at save time and refused at render time (400 TEMPLATE_PARTIAL_NOT_FOUND).
 * - list: limit default 20, over 100 is clamped to 100, below 1 or not an integer is 400.
 *   search is a case-insensitive substring of the name (% and _ literal). The cursor is the
 *   last name; filters are taken from each request.
 * - Only kind template can be sent (renderForSend refuses layouts and partials with 400).
 */
import type { RequestMeta } from "../../../access/http";
import type { Principal } from "../../../access/principal";
import { tx, type Sql } from "../../../core/db";
import { ApiError, badRequest, conflict, notFound, type ErrorDetail } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { buildPage, decodeCursor, type Page } from "../../../core/pagination";
import { isUniqueViolation } from "../../../core/store/sql";
import type { MailContext } from "../part-context";
import { audit, workspaceDisplayName } from "../../../kernel/tenancy";
import { parseRaw, resolveBrand, validateBrand, type BrandRaw, type BrandTokens } from "./brand";
import { lint, type Finding } from "./lint";
import { applySchema, checkIncludes, prepare, render, validateSchema, variablesOf, type Includable, type Rendered, type VariablesSchema } from "./render";
import * as store from "./store";
import { brandView, templateListItemView, templateView, type BrandView, type TemplateListItemView, type TemplateView } from "./views";
import { NAME_RE, SUBJECT_MAX, BODY_MAX } from "./limits";

export const KINDS = ["template", "layout", "partial"] as const;
export const LIST_DEFAULT = 20;
export const LIST_MAX = 100;
export const TAGS_MAX = 20;
const TAG_RE = /^[a-z0-9_-]{1,64}$/;

export interface TemplateInput {
  name?: unknown;
  kind?: unknown;
  subject?: unknown;
  body_html?: unknown;
  body_text?: unknown;
  variables_schema?: unknown;
  tags?: unknown;
}

export interface DraftInput {
  subject?: unknown;
  body_html?: unknown;
  body_text?: unknown;
  data?: unknown;
}

const likePattern = (q: string) => `%${q.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`)}%`;

/** The brand's resolved tokens for a workspace (defaults where unset). */
export async function brandTokens(db: Sql, workspaceId: string): Promise<BrandTokens> {
  const row = await store.brandOf(db, workspaceId);
  return resolveBrand(parseRaw(row?.raw), await workspaceDisplayName(db, workspaceId));
}

const includablesOf = async (db: Sql, workspaceId: string): Promise<Includable[]> =>
  (await store.includables(db, workspaceId)).map((r) => ({ kind: r.kind, name: r.name, body_html: r.body_html }));

function dataObject(v: unknown, required: boolean): Record<string, unknown> {
  if (v === undefined || v === null) {
    if (required) throw badRequest("data is required", [{ field: "data", reason: "required: an object of template variables" }]);
    return {};
  }
  if (typeof v !== "object" || Array.isArray(v)) throw badRequest("data must be an object", [{ field: "data", reason: "must be an object" }]);
  return v as Record<string, unknown>;
}

/** Renders a stored template of the workspace. */
async function renderStored(db: Sql, workspaceId: string, row: store.TemplateRow, data: Record<string, unknown>, missing: "error" | "placeholder" | "empty"): Promise<Rendered> {
  const schema = row.variables_schema ? (JSON.parse(row.variables_schema) as VariablesSchema) : null;
  const checked = applySchema(schema, data, missing === "error");
  return render({
    rootId: row.kind === "template" ? `template.${row.name}` : `${row.kind}.${row.name}`,
    source: { subject: row.subject, body_html: row.body_html, body_text: row.body_text },
    includables: await includablesOf(db, workspaceId),
    brand: await brandTokens(db, workspaceId),
    data: checked,
    missing: missing === "placeholder" ? "placeholder" : "empty",
  });
}

/**
 * For the sending part: renders template `name` of the workspace with `data`. missing
 * "error" enforces the variables_schema (400 with one detail per problem); "placeholder"
 * (test-send) renders absent variables as [name] and skips the schema's checks. Unknown
 * template: 404; a layout or partial: 400.
 */
export async function renderForSend(
  db: Sql,
  workspaceId: string,
  name: string,
  data: Record<string, unknown>,
  opts: { missing: "error" | "placeholder" },
): Promise<Rendered & { template_name: string }> {
  return (await sendRenderer(db, workspaceId, name))(data, opts);
}

export type SendRenderer = (data: Record<string, unknown>, opts: { missing: "error" | "placeholder" }) => Rendered & { template_name: string };

/**
 * renderForSend for many renders of one template in one request (send-batch): the template,
 * the workspace's layouts and partials and the brand are read once. Same errors.
 */
export async function sendRenderer(db: Sql, workspaceId: string, name: string): Promise<SendRenderer> {
  // Names also come from other services (the waitlist's settings), past no route schema.
  const row = NAME_RE.test(name) ? await store.templateByName(db, workspaceId, name) : null;
  if (!row) throw notFound("Template");
  if (row.kind !== "template") throw badRequest(`${name} is a ${row.kind}: only templates of kind template can be sent`, [{ field: "name", reason: "kind must be template" }], "TEMPLATE_NOT_SENDABLE");
  const schema = row.variables_schema ? (JSON.parse(row.variables_schema) as VariablesSchema) : null;
  const includables = await includablesOf(db, workspaceId);
  const brand = await brandTokens(db, workspaceId);
  return (data, opts) => {
    const checked = applySchema(schema, dataObject(data, false), opts.missing === "error");
    const r = render({
      rootId: `template.${row.name}`,
      source: { subject: row.subject, body_html: row.body_html, body_text: row.body_text },
      includables,
      brand,
      data: checked,
      missing: opts.missing === "placeholder" ? "placeholder" : "empty",
    });
    return { ...r, template_name: row.name };
  };
}

export class ContentService {
  constructor(private readonly m: MailContext) {}

  /** For the sending part (same as the module-level export, bound to this app's database). */
  renderForSend(workspaceId: string, name: string, data: Record<string, unknown>, opts: { missing: "error" | "placeholder" }) {
    return renderForSend(this.m.ctx.db, workspaceId, name, data, opts);
  }

  // ------------------------------------------------------------------ brand

  private async brandView(db: Sql, workspaceId: string): Promise<BrandView> {
    const row = await store.brandOf(db, workspaceId);
    return brandView(parseRaw(row?.raw), await workspaceDisplayName(db, workspaceId));
  }

  async getBrand(p: Principal, workspaceId: string): Promise<BrandView> {
    const ws = await this.m.guard(p, workspaceId, "mail.brand.read");
    return this.brandView(this.m.ctx.db, ws.id);
  }

  async putBrand(p: Principal, workspaceId: string, body: unknown, meta?: RequestMeta): Promise<BrandView> {
    const ws = await this.m.guard(p, workspaceId, "mail.brand.write");
    const raw = validateBrand(body);
    const set = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== null));
    await tx(this.m.ctx.db, async (t) => {
      await store.putBrand(t, ws.id, JSON.stringify(set), this.m.ctx.clock.iso());
      await audit(t, this.m.ctx, { actor: p, action: "mail.brand.update", workspaceId: ws.id, target: { type: "mail_brand", id: ws.id }, meta, metadata: { fields: Object.keys(set) } });
    });
    return this.brandView(this.m.ctx.db, ws.id);
  }

  async deleteBrand(p: Principal, workspaceId: string, meta?: RequestMeta): Promise<void> {
    const ws = await this.m.guard(p, workspaceId, "mail.brand.write");
    await tx(this.m.ctx.db, async (t) => {
      await store.deleteBrand(t, ws.id);
      await audit(t, this.m.ctx, { actor: p, action: "mail.brand.reset", workspaceId: ws.id, target: { type: "mail_brand", id: ws.id }, meta });
    });
  }

  // ------------------------------------------------------------------ templates

  private validateTemplate(input: TemplateInput) {
    const details: ErrorDetail[] = [];
    const name = input.name;
    if (typeof name !== "string" || !NAME_RE.test(name)) details.push({ field: "name", reason: "required: 1-64 of lowercase letters, digits, underscore and hyphen" });
    const kind = input.kind === undefined ? "template" : input.kind;
    if (!(KINDS as readonly unknown[]).includes(kind)) details.push({ field: "kind", reason: `one of ${KINDS.join(", ")}` });
    const subject = input.subject;
    if (typeof subject !== "string") details.push({ field: "subject", reason: 'required: a string ("" for layouts and partials)' });
    else if (subject.length > SUBJECT_MAX) details.push({ field: "subject", reason: `at most ${SUBJECT_MAX} characters` });
    else if (kind === "template" && subject.trim() === "") details.push({ field: "subject", reason: "required for kind template" });
    else if ((kind === "layout" || kind === "partial") && subject !== "") details.push({ field: "subject", reason: "must be an empty string for layouts and partials" });
    if (typeof input.body_html !== "string" || input.body_html === "") details.push({ field: "body_html", reason: "required: a non-empty string" });
    else if (input.body_html.length > BODY_MAX) details.push({ field: "body_html", reason: `at most ${BODY_MAX} characters` });
    const text = input.body_text;
    if (text !== undefined && text !== null && (typeof text !== "string" || text.length > BODY_MAX)) details.push({ field: "body_text", reason: `a string of at most ${BODY_MAX} characters, or null` });
    let tags: string[] = [];
    if (input.tags !== undefined && input.tags !== null) {
      if (!Array.isArray(input.tags)) details.push({ field: "tags", reason: "must be an array of strings" });
      else {
        tags = [...new Set(input.tags as unknown[])] as string[];
        if (tags.length > TAGS_MAX) details.push({ field: "tags", reason: `at most ${TAGS_MAX} tags` });
        tags.forEach((t, i) => {
          if (typeof t !== "string" || !TAG_RE.test(t)) details.push({ field: `tags[${i}]`, reason: "1-64 of lowercase letters, digits, underscore and hyphen" });
        });
      }
    }
    if (details.length) throw badRequest("Invalid template", details);
    const schema = validateSchema(input.variables_schema);
    return {
      name: name as string,
      kind: kind as store.TemplateKind,
      subject: subject as string,
      body_html: input.body_html as string,
      body_text: typeof text === "string" && text !== "" ? text : null,
      schema,
      tags,
    };
  }

  async upsert(p: Principal, workspaceId: string, input: TemplateInput, meta?: RequestMeta): Promise<TemplateView> {
    const ws = await this.m.guard(p, workspaceId, "mail.template.write");
    const v = this.validateTemplate(input);
    // Syntax of every field, and no include cycle with the saved layouts and partials.
    const rootId = v.kind === "template" ? `template.${v.name}` : `${v.kind}.${v.name}`;
    const others = (await includablesOf(this.m.ctx.db, ws.id)).filter((i) => `${i.kind}.${i.name}` !== rootId);
    const { partials, roots } = prepare({ rootId, source: { subject: v.subject, body_html: v.body_html, body_text: v.body_text }, includables: others });
    checkIncludes(rootId, roots, partials, true);

    const now = this.m.ctx.clock.iso();
    const fields = {
      subject: v.subject,
      body_html: v.body_html,
      body_text: v.body_text,
      variables_schema: v.schema ? JSON.stringify(v.schema) : null,
      tags: JSON.stringify(v.tags),
      updated_at: now,
    };
    const write = () =>
      tx(this.m.ctx.db, async (t) => {
        const existing = await store.templateByName(t, ws.id, v.name);
        if (existing) {
          if (existing.kind !== v.kind) {
            throw conflict(`The template ${v.name} is a ${existing.kind}; its kind cannot change (delete it and create it again)`, "TEMPLATE_KIND_IMMUTABLE");
          }
          await store.replaceTemplate(t, existing.id, ws.id, fields, v.tags);
          await audit(t, this.m.ctx, { actor: p, action: "mail.template.update", workspaceId: ws.id, target: { type: "mail_template", id: existing.id }, meta, metadata: { name: v.name } });
          return existing.id;
        }
        const id = uuid();
        await store.insertTemplate(
          t,
          { id, workspace_id: ws.id, name: v.name, kind: v.kind, ...fields, source: "manual", source_ref: null, source_synced_at: null, created_at: now },
          v.tags,
        );
        await audit(t, this.m.ctx, { actor: p, action: "mail.template.create", workspaceId: ws.id, target: { type: "mail_template", id }, meta, metadata: { name: v.name, kind: v.kind } });
        return id;
      });
    try {
      await write();
    } catch (e) {
      // Two creates at once (PostgreSQL): the loser replaces the winner's row.
      if (!isUniqueViolation(e)) throw e;
      await write();
    }
    return templateView((await store.templateByName(this.m.ctx.db, ws.id, v.name))!);
  }

  /** A template of the path: the route schema holds its name to NAME_RE. */
  private async byName(db: Sql, workspaceId: string, name: string): Promise<store.TemplateRow> {
    const row = await store.templateByName(db, workspaceId, name);
    if (!row) throw notFound("Template");
    return row;
  }

  async get(p: Principal, workspaceId: string, name: string): Promise<TemplateView> {
    const ws = await this.m.guard(p, workspaceId, "mail.template.read");
    return templateView(await this.byName(this.m.ctx.db, ws.id, name));
  }

  async remove(p: Principal, workspaceId: string, name: string, meta?: RequestMeta): Promise<void> {
    const ws = await this.m.guard(p, workspaceId, "mail.template.write");
    await tx(this.m.ctx.db, async (t) => {
      const row = await this.byName(t, ws.id, name);
      await store.deleteTemplate(t, row.id);
      await audit(t, this.m.ctx, { actor: p, action: "mail.template.delete", workspaceId: ws.id, target: { type: "mail_template", id: row.id }, meta, metadata: { name } });
    });
  }

  async list(p: Principal, workspaceId: string, q: { kind?: string; tags?: string; search?: string; limit?: number; cursor?: string }): Promise<Page<TemplateListItemView>> {
    const ws = await this.m.guard(p, workspaceId, "mail.template.read");
    let limit = LIST_DEFAULT;
    if (q.limit !== undefined) {
      const n = Number(q.limit);
      if (!Number.isInteger(n) || n < 1) throw badRequest("limit must be a positive integer", [{ field: "limit", reason: `integer from 1 (values over ${LIST_MAX} are clamped to ${LIST_MAX})` }]);
      limit = Math.min(n, LIST_MAX);
    }
    const kind = (KINDS as readonly string[]).includes(q.kind ?? "") ? (q.kind as store.TemplateKind) : null;
    const tags = (q.tags ?? "").split(",").map((t) => t.trim()).filter(Boolean).slice(0, 50);
    if (q.search !== undefined && q.search.length > 200) throw badRequest("search is too long", [{ field: "search", reason: "at most 200 characters" }]);
    const pattern = q.search ? likePattern(q.search) : null;
    const c = decodeCursor<{ n?: unknown }>(q.cursor);
    if (c && typeof c.n !== "string") throw badRequest("Malformed cursor", [{ field: "cursor", reason: "not a cursor issued by this API" }], "INVALID_CURSOR");
    const rows = await store.listTemplates(this.m.ctx.db, { workspaceId: ws.id, kind, tags, pattern, after: c ? (c.n as string) : null, limit: limit + 1 });
    return buildPage(rows, limit, (r) => ({ n: r.name }), templateListItemView);
  }

  async tags(p: Principal, workspaceId: string): Promise<{ data: string[] }> {
    const ws = await this.m.guard(p, workspaceId, "mail.template.read");
    return { data: await store.tagsOf(this.m.ctx.db, ws.id) };
  }

  async render(p: Principal, workspaceId: string, name: string, body: { data?: unknown }): Promise<Rendered> {
    const ws = await this.m.guard(p, workspaceId, "mail.template.read");
    const row = await this.byName(this.m.ctx.db, ws.id, name);
    return renderStored(this.m.ctx.db, ws.id, row, dataObject(body.data, true), "error");
  }

  async variables(p: Principal, workspaceId: string, name: string): Promise<{ data: string[] }> {
    const ws = await this.m.guard(p, workspaceId, "mail.template.read");
    const row = await this.byName(this.m.ctx.db, ws.id, name);
    const rootId = row.kind === "template" ? `template.${row.name}` : `${row.kind}.${row.name}`;
    const { asts, partials } = prepare({ rootId, source: { subject: row.subject, body_html: row.body_html, body_text: row.body_text }, includables: await includablesOf(this.m.ctx.db, ws.id) });
    const roots = [asts.subject, asts.body_html, ...(asts.body_text ? [asts.body_text] : [])];
    return { data: variablesOf(roots, partials).map((v) => v.path) };
  }

  private async draft(ws: { id: string }, input: DraftInput, inline = true): Promise<Rendered> {
    const details: ErrorDetail[] = [];
    if (input.subject !== undefined && input.subject !== null && (typeof input.subject !== "string" || input.subject.length > SUBJECT_MAX)) details.push({ field: "subject", reason: `a string of at most ${SUBJECT_MAX} characters` });
    if (typeof input.body_html !== "string" || input.body_html.length > BODY_MAX) details.push({ field: "body_html", reason: `required: a string of at most ${BODY_MAX} characters` });
    if (input.body_text !== undefined && input.body_text !== null && (typeof input.body_text !== "string" || input.body_text.length > BODY_MAX)) details.push({ field: "body_text", reason: `a string of at most ${BODY_MAX} characters` });
    if (details.length) throw badRequest("Invalid draft", details);
    return render({
      rootId: "draft",
      source: { subject: (input.subject as string | undefined) ?? "", body_html: input.body_html as string, body_text: (input.body_text as string | undefined) || null },
      includables: await includablesOf(this.m.ctx.db, ws.id),
      brand: await brandTokens(this.m.ctx.db, ws.id),
      data: dataObject(input.data, false),
      missing: "empty",
      inline,
    });
  }

  async preview(p: Principal, workspaceId: string, input: DraftInput): Promise<Rendered> {
    const ws = await this.m.guard(p, workspaceId, "mail.template.read");
    return this.draft(ws, input);
  }

  async lint(p: Principal, workspaceId: string, input: DraftInput): Promise<{ score: number; findings: Finding[] }> {
    const ws = await this.m.guard(p, workspaceId, "mail.template.read");
    const r = await this.draft(ws, input, false);
    return lint({ subject: r.subject, html: r.html, text: typeof input.body_text === "string" && input.body_text !== "" ? r.text : null });
  }
}

export { ApiError };
