/**
 * Rendering of templates with Handlebars: a Handlebars environment per distinct set of sources
 * (cached, keyed by a hash of every source: no helpers or partials leak between workspaces),
 * HTML escaping on, prototype access off.
 * Partials: {{> layout.<name>}}, {{> partial.<name>}} (the workspace's layouts and
 * partials) and {{> bp.footer}} (built from the brand). Brand tokens are {{brand.*}}.
 * Includes are checked on the AST before anything runs: a cycle is 400 TEMPLATE_RECURSION,
 * an unknown or dynamic partial name is 400. CSS is inlined with juice; the text part, when
 * the template has none, is derived from the HTML with html-to-text (link URLs kept).
 */
import { createHash } from "node:crypto";
import type Handlebars from "handlebars";
import { defaultOf, lazy } from "../../../core/lazy";
import { ApiError, badRequest, type ErrorDetail } from "../../../core/errors";
import { footerHtml, type BrandTokens } from "./brand";

// Loaded by the first template parsed or rendered, not at start-up (core/lazy.ts).
const handlebars = lazy(() => defaultOf(require("handlebars") as typeof import("handlebars")));
const juice = lazy(() => defaultOf(require("juice") as typeof import("juice")));

type Node = hbs.AST.Node;
type Program = hbs.AST.Program;

export const FOOTER_PARTIAL = "bp.footer";
const BUILTIN_HELPERS = new Set(["if", "unless", "each", "with", "lookup", "log", "blockHelperMissing", "helperMissing"]);
const RUNTIME = { allowProtoPropertiesByDefault: false, allowProtoMethodsByDefault: false } as const;

export interface Source {
  subject: string;
  body_html: string;
  body_text: string | null;
}

/** A layout or partial of the workspace, addressed as `${kind}.${name}`. */
export interface Includable {
  kind: "template" | "layout" | "partial";
  name: string;
  body_html: string;
}

export interface Rendered {
  subject: string;
  html: string;
  text: string;
}

/** Parses one field; a syntax error is a 400 naming the field. */
export function parse(src: string, field: string): Program {
  try {
    return handlebars().parse(src);
  } catch (e) {
    throw badRequest(`Template syntax error in ${field}`, [{ field, reason: String((e as Error).message).replace(/\s*\n\s*/g, " ").slice(0, 500) }], "TEMPLATE_SYNTAX_ERROR");
  }
}

// ------------------------------------------------------------------ AST walking

function visit(node: Node | null | undefined, fn: (n: Node) => void): void {
  if (!node) return;
  fn(node);
  const n = node as unknown as Record<string, unknown>;
  if (node.type === "Program") for (const s of (node as Program).body) visit(s, fn);
  for (const k of ["program", "inverse"]) if (n[k]) visit(n[k] as Node, fn);
  for (const p of (n.params as Node[] | undefined) ?? []) visit(p, fn);
  const hash = n.hash as hbs.AST.Hash | undefined;
  if (hash) for (const pair of hash.pairs) visit(pair.value, fn);
  if (node.type === "MustacheStatement" || node.type === "SubExpression" || node.type === "BlockStatement") visit(n.path as Node, fn);
}

/** Partial names an AST includes, in order; a dynamic name ({{> (expr)}}) is refused. */
export function partialRefs(ast: Program, field: string): string[] {
  const out: string[] = [];
  visit(ast, (n) => {
    if (n.type !== "PartialStatement" && n.type !== "PartialBlockStatement") return;
    const name = (n as hbs.AST.PartialStatement).name;
    if (name.type === "PathExpression") out.push((name as hbs.AST.PathExpression).original);
    else if ((name as Node).type === "StringLiteral") out.push((name as unknown as hbs.AST.StringLiteral).value);
    else throw badRequest("Dynamic partial names are not supported", [{ field, reason: "partials are included by a literal name: {{> partial.<name>}}" }]);
  });
  return out;
}

/**
 * Walks the include graph from the root's fields: a cycle is 400 TEMPLATE_RECURSION with the
 * path; an unknown name is 400. `unknownOk` (checks at save time) ignores unknown names.
 */
export function checkIncludes(rootId: string, roots: { field: string; ast: Program }[], partials: Map<string, Program>, unknownOk = false): void {
  const state = new Map<string, "visiting" | "done">();
  const walk = (id: string, refs: string[], path: string[], field: string) => {
    for (const ref of refs) {
      if (ref === FOOTER_PARTIAL || ref === "@partial-block") continue;
      if (ref === rootId || state.get(ref) === "visiting") {
        const cycle = [...path, ref].join(" -> ");
        throw new ApiError(400, "TEMPLATE_RECURSION", `The template includes itself: ${cycle}`, [{ field, reason: `include cycle ${cycle}` }]);
      }
      if (state.get(ref) === "done") continue;
      const ast = partials.get(ref);
      if (!ast) {
        if (unknownOk) continue;
        throw badRequest(`Unknown partial ${ref}`, [{ field, reason: `{{> ${ref}}} names no layout or partial of this workspace (layout.<name>, partial.<name> or bp.footer)` }], "TEMPLATE_PARTIAL_NOT_FOUND");
      }
      state.set(ref, "visiting");
      walk(ref, partialRefs(ast, ref), [...path, ref], field);
      state.set(ref, "done");
    }
    void id;
  };
  for (const r of roots) walk(rootId, partialRefs(r.ast, r.field), [rootId], r.field);
}

// ------------------------------------------------------------------ variables

interface Scope {
  base: string[];
  params: Map<string, string[]>;
  parent: Scope | null;
  /** Inside an #each: placeholders are not filled in. */
  iterated: boolean;
}

export interface Variable {
  path: string;
  iterated: boolean;
}

/**
 * Data expressions of an AST, dotted paths kept, first-occurrence order: helpers, partial
 * names, @data variables, `this` and brand tokens are left out. Inside #each/#with the
 * paths are prefixed with the block's subject (items.name); included partials are walked
 * where they are included.
 */
export function variablesOf(asts: Program[], partials: Map<string, Program>): Variable[] {
  const seen = new Map<string, Variable>();
  const visiting = new Set<string>();
  const add = (path: string[] | null, scope: Scope) => {
    if (!path || !path.length) return;
    const p = path.join(".");
    if (!seen.has(p)) seen.set(p, { path: p, iterated: scope.iterated });
  };
  const resolve = (pe: hbs.AST.PathExpression, scope: Scope): string[] | null => {
    if (pe.data) return null;
    let s: Scope = scope;
    for (let d = 0; d < pe.depth && s.parent; d++) s = s.parent;
    const parts = pe.parts;
    if (!parts.length) return null;
    if (!/^this\b/.test(pe.original)) {
      for (let c: Scope | null = s; c; c = c.parent) {
        const bp = c.params.get(parts[0]!);
        if (bp) return [...bp, ...parts.slice(1)];
      }
    }
    const full = [...s.base, ...parts];
    if (full[0] === "brand") return null;
    return full;
  };
  const expr = (n: Node, scope: Scope) => {
    if (n.type === "PathExpression") add(resolve(n as hbs.AST.PathExpression, scope), scope);
    else if (n.type === "SubExpression") call(n as hbs.AST.SubExpression, scope);
  };
  const call = (n: { path: Node; params: Node[]; hash?: hbs.AST.Hash }, scope: Scope) => {
    for (const p of n.params) expr(p, scope);
    for (const pair of n.hash?.pairs ?? []) expr(pair.value, scope);
  };
  const program = (p: Program | undefined, scope: Scope) => {
    if (p) for (const s of p.body) stmt(s, scope);
  };
  const stmt = (n: Node, scope: Scope) => {
    switch (n.type) {
      case "MustacheStatement": {
        const m = n as hbs.AST.MustacheStatement;
        const helperCall = m.params.length > 0 || (m.hash?.pairs.length ?? 0) > 0;
        if (helperCall) call(m, scope);
        else if (m.path.type === "PathExpression" && !BUILTIN_HELPERS.has((m.path as hbs.AST.PathExpression).original)) expr(m.path, scope);
        else if (m.path.type === "SubExpression") expr(m.path, scope);
        return;
      }
      case "BlockStatement": {
        const b = n as hbs.AST.BlockStatement;
        const name = b.path.type === "PathExpression" ? (b.path as hbs.AST.PathExpression).original : "";
        const helperCall = b.params.length > 0 || (b.hash?.pairs.length ?? 0) > 0;
        let inner = scope;
        if (!helperCall) {
          // {{#section}}...{{/section}}: a variable and the context of its block.
          const path = resolve(b.path as hbs.AST.PathExpression, scope);
          add(path, scope);
          if (path) inner = { base: path, params: new Map(), parent: scope, iterated: true };
        } else {
          call(b, scope);
          if ((name === "each" || name === "with") && b.params[0]?.type === "PathExpression") {
            const subject = resolve(b.params[0] as hbs.AST.PathExpression, scope);
            if (subject) {
              const params = new Map<string, string[]>();
              const bp = b.program.blockParams ?? [];
              if (bp[0]) params.set(bp[0], subject);
              inner = { base: subject, params, parent: scope, iterated: scope.iterated || name === "each" };
            }
          }
        }
        program(b.program, inner);
        program(b.inverse, scope);
        return;
      }
      case "PartialStatement":
      case "PartialBlockStatement": {
        const p = n as hbs.AST.PartialBlockStatement;
        for (const x of p.params) expr(x, scope);
        for (const pair of p.hash?.pairs ?? []) expr(pair.value, scope);
        const ref = p.name.type === "PathExpression" ? (p.name as hbs.AST.PathExpression).original : null;
        const ast = ref ? partials.get(ref) : undefined;
        if (ref && ast && !visiting.has(ref)) {
          visiting.add(ref);
          program(ast, scope);
          visiting.delete(ref);
        }
        if (n.type === "PartialBlockStatement") program(p.program, scope);
        return;
      }
      default:
        return;
    }
  };
  const root: Scope = { base: [], params: new Map(), parent: null, iterated: false };
  for (const a of asts) program(a, root);
  return [...seen.values()];
}

// ------------------------------------------------------------------ rendering

export interface RenderInput {
  /** The include id of the root when it is itself a layout or partial (cycle detection), else e.g. "template.<name>". */
  rootId: string;
  source: Source;
  includables: Includable[];
  brand: BrandTokens;
  data: Record<string, unknown>;
  /** placeholder: variables absent from data render as [path]. */
  missing: "empty" | "placeholder";
  /** false: the HTML as rendered, CSS not inlined (lint reads the markup as written). */
  inline?: boolean;
}

const includeId = (i: Includable) => `${i.kind}.${i.name}`;

export function prepare(input: Pick<RenderInput, "rootId" | "source" | "includables">) {
  const asts = {
    subject: parse(input.source.subject, "subject"),
    body_html: parse(input.source.body_html, "body_html"),
    body_text: input.source.body_text === null ? null : parse(input.source.body_text, "body_text"),
  };
  const partials = new Map<string, Program>();
  for (const i of input.includables) {
    const id = includeId(i);
    if (id === input.rootId || i.kind === "template") continue;
    partials.set(id, parse(i.body_html, id));
  }
  const roots = [
    { field: "subject", ast: asts.subject },
    { field: "body_html", ast: asts.body_html },
    ...(asts.body_text ? [{ field: "body_text", ast: asts.body_text }] : []),
  ];
  if (input.rootId.startsWith("layout.") || input.rootId.startsWith("partial.")) partials.set(input.rootId, asts.body_html);
  return { asts, partials, roots };
}

function setPath(obj: Record<string, unknown>, path: string[], value: string): void {
  let cur: Record<string, unknown> = obj;
  for (let i = 0; i < path.length - 1; i++) {
    const k = path[i]!;
    const next = cur[k];
    if (next === undefined || next === null) cur[k] = {};
    else if (typeof next !== "object") return;
    cur = cur[k] as Record<string, unknown>;
  }
  const last = path[path.length - 1]!;
  if (cur[last] === undefined || cur[last] === null) cur[last] = value;
}

export function getPath(obj: unknown, path: string[]): unknown {
  let cur = obj;
  for (const k of path) {
    if (cur === null || typeof cur !== "object" || !Object.prototype.hasOwnProperty.call(cur, k)) return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

/**
 * What a render compiles, cached: the ASTs, the include check, the placeholder variables
 * and one Handlebars environment per escaping mode with every partial and field compiled.
 * Keyed by a SHA-256 of everything that determines them (root id, every field's source,
 * every includable's kind, name and source, the brand footer's HTML), so only identical
 * compiled code is ever shared; data stays an argument of each call. Bounded LRU.
 */
interface Compiled {
  asts: ReturnType<typeof prepare>["asts"];
  /** Variables filled with [path] in placeholder mode (not inside #each). */
  placeholders: string[][];
  subject: Handlebars.TemplateDelegate;
  body_html: Handlebars.TemplateDelegate;
  body_text: Handlebars.TemplateDelegate | null;
}

export const COMPILED_CACHE_MAX = 500;
const compiledCache = new Map<string, Compiled>();

function compiledKey(input: RenderInput, footer: string): string {
  const h = createHash("sha256");
  h.update(JSON.stringify([input.rootId, input.source.subject, input.source.body_html, input.source.body_text, footer, input.includables.length]));
  for (const i of input.includables) h.update(JSON.stringify([i.kind, i.name, i.body_html]));
  return h.digest("base64");
}

function compiledFor(input: RenderInput, footer: string): Compiled {
  const key = compiledKey(input, footer);
  const hit = compiledCache.get(key);
  if (hit) {
    compiledCache.delete(key);
    compiledCache.set(key, hit);
    return hit;
  }
  const { asts, partials, roots } = prepare(input);
  checkIncludes(input.rootId, roots, partials);
  const placeholders = variablesOf([asts.subject, asts.body_html, ...(asts.body_text ? [asts.body_text] : [])], partials)
    .filter((v) => !v.iterated)
    .map((v) => v.path.split("."));
  // One environment per escaping mode: partials compiled with its options, cached in it.
  const env = (noEscape: boolean) => {
    const hb = handlebars().create();
    hb.unregisterHelper("log");
    for (const [id, ast] of partials) hb.registerPartial(id, hb.compile(ast, { noEscape }));
    hb.registerPartial(FOOTER_PARTIAL, (() => footer) as unknown as Handlebars.TemplateDelegate);
    return (ast: Program) => hb.compile(ast, { noEscape });
  };
  const html = env(false);
  const plain = env(true);
  const c: Compiled = { asts, placeholders, subject: plain(asts.subject), body_html: html(asts.body_html), body_text: asts.body_text ? plain(asts.body_text) : null };
  compiledCache.set(key, c);
  if (compiledCache.size > COMPILED_CACHE_MAX) compiledCache.delete(compiledCache.keys().next().value!);
  return c;
}

export function render(input: RenderInput): Rendered {
  const footer = footerHtml(input.brand);
  const c = compiledFor(input, footer);
  let data: Record<string, unknown> = structuredClone(input.data);
  if (input.missing === "placeholder") for (const path of c.placeholders) setPath(data, path, `[${path.join(".")}]`);
  data = { ...data, brand: input.brand };
  const run = (fn: Handlebars.TemplateDelegate, field: string) => {
    try {
      return fn(data, RUNTIME);
    } catch (e) {
      if (e instanceof ApiError) throw e;
      throw badRequest(`The template could not be rendered`, [{ field, reason: String((e as Error).message).split("\n")[0]! }], "TEMPLATE_RENDER_ERROR");
    }
  };
  const subject = run(c.subject, "subject").replace(/[\r\n]+/g, " ").trim();
  const rawHtml = run(c.body_html, "body_html");
  const text = c.body_text ? run(c.body_text, "body_text") : memo(textMemo, rawHtml, deriveText);
  return { subject, html: input.inline === false ? rawHtml : memo(inlineMemo, rawHtml, inlineCss), text };
}

/**
 * CSS inlining and the derived text are pure functions of the rendered HTML: when it repeats
 * (the same data sent to many recipients, a batch), the last results are reused. Bounded:
 * at most MEMO_MAX entries per function, HTML up to MEMO_HTML_MAX characters.
 */
const MEMO_MAX = 200;
const MEMO_HTML_MAX = 32_768;
const inlineMemo = new Map<string, string>();
const textMemo = new Map<string, string>();

function memo(cache: Map<string, string>, html: string, fn: (html: string) => string): string {
  if (html.length > MEMO_HTML_MAX) return fn(html);
  const hit = cache.get(html);
  if (hit !== undefined) {
    cache.delete(html);
    cache.set(html, hit);
    return hit;
  }
  const out = fn(html);
  cache.set(html, out);
  if (cache.size > MEMO_MAX) cache.delete(cache.keys().next().value!);
  return out;
}

/** html-to-text's converter, built once: convert() would compile the options and selectors at every call. */
const htmlToText = lazy(() => (require("html-to-text") as typeof import("html-to-text")).compile({
  wordwrap: 78,
  selectors: [
    { selector: "a", options: { hideLinkHrefIfSameAsText: true } },
    { selector: "img", format: "skip" },
    { selector: "style", format: "skip" },
    // Upper-cased headings would also upper-case a template's own expressions
    // ({{user.name}} -> {{USER.NAME}}) wherever the derived text is shown or saved back.
    ...["h1", "h2", "h3", "h4", "h5", "h6"].map((selector) => ({ selector, options: { uppercase: false } })),
  ],
}));

/** The text part of an HTML body: link URLs kept after the link text, images left out. */
export function deriveText(html: string): string {
  return htmlToText()(html).trim();
}

export function inlineCss(html: string): string {
  try {
    return juice()(html, { applyStyleTags: true, removeStyleTags: true, preserveMediaQueries: true, preserveImportant: true });
  } catch {
    return html;
  }
}

// ------------------------------------------------------------------ variables_schema

export const VAR_TYPES = ["string", "number", "integer", "boolean", "object", "array", "email", "url", "date"] as const;
export type VarType = (typeof VAR_TYPES)[number];
export interface VarSpec {
  type: VarType;
  required: boolean;
  default?: unknown;
  options?: unknown[];
}
export interface VariablesSchema {
  version: 1;
  vars: Record<string, VarSpec>;
}

const VAR_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
const MAX_VARS = 200;

function typeProblem(type: VarType, v: unknown): string | null {
  switch (type) {
    case "string":
      return typeof v === "string" ? null : "must be a string";
    case "number":
      return typeof v === "number" && Number.isFinite(v) ? null : "must be a number";
    case "integer":
      return typeof v === "number" && Number.isInteger(v) ? null : "must be an integer";
    case "boolean":
      return typeof v === "boolean" ? null : "must be a boolean";
    case "object":
      return v !== null && typeof v === "object" && !Array.isArray(v) ? null : "must be an object";
    case "array":
      return Array.isArray(v) ? null : "must be an array";
    case "email":
      return typeof v === "string" && /^[^\s@<>()[\],;:"]+@[^\s@<>()[\],;:"]+\.[^\s@<>()[\],;:"]+$/.test(v) && v.length <= 254 ? null : "must be an email address";
    case "url":
      try {
        return typeof v === "string" && ["http:", "https:"].includes(new URL(v).protocol) ? null : "must be an http(s) URL";
      } catch {
        return "must be an http(s) URL";
      }
    case "date":
      return typeof v === "string" && /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(v) && !Number.isNaN(Date.parse(v)) ? null : "must be an ISO 8601 date";
  }
}

/** Checks a variables_schema (version 1); null stays null. One detail per problem. */
export function validateSchema(v: unknown): VariablesSchema | null {
  if (v === undefined || v === null) return null;
  const details: ErrorDetail[] = [];
  const f = "variables_schema";
  if (typeof v !== "object" || Array.isArray(v)) throw badRequest("Invalid variables_schema", [{ field: f, reason: "must be an object {version: 1, vars: {...}} or null" }]);
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) if (k !== "version" && k !== "vars") details.push({ field: `${f}.${k}`, reason: "unknown field (version, vars)" });
  if (o.version !== 1) details.push({ field: `${f}.version`, reason: "must be 1" });
  const vars: Record<string, VarSpec> = {};
  if (o.vars === null || typeof o.vars !== "object" || Array.isArray(o.vars)) details.push({ field: `${f}.vars`, reason: "must be an object of name -> {type, required, default, options}" });
  else {
    const entries = Object.entries(o.vars as Record<string, unknown>);
    if (entries.length > MAX_VARS) details.push({ field: `${f}.vars`, reason: `at most ${MAX_VARS} variables` });
    for (const [name, spec] of entries) {
      const at = `${f}.vars.${name}`;
      if (!VAR_NAME_RE.test(name) || name.length > 200) details.push({ field: at, reason: "names are identifiers, dotted for nested values (user.first_name)" });
      if (spec === null || typeof spec !== "object" || Array.isArray(spec)) {
        details.push({ field: at, reason: "must be an object {type, required, default, options}" });
        continue;
      }
      const s = spec as Record<string, unknown>;
      for (const k of Object.keys(s)) if (!["type", "required", "default", "options", "description"].includes(k)) details.push({ field: `${at}.${k}`, reason: "unknown field (type, required, default, options, description)" });
      const type = s.type === undefined ? "string" : s.type;
      if (!(VAR_TYPES as readonly unknown[]).includes(type)) {
        details.push({ field: `${at}.type`, reason: `one of ${VAR_TYPES.join(", ")}` });
        continue;
      }
      if (s.required !== undefined && typeof s.required !== "boolean") details.push({ field: `${at}.required`, reason: "must be a boolean" });
      const out: VarSpec = { type: type as VarType, required: s.required === true };
      if (s.options !== undefined) {
        if (!Array.isArray(s.options) || s.options.length === 0 || s.options.length > 100) details.push({ field: `${at}.options`, reason: "a list of 1-100 allowed values" });
        else {
          s.options.forEach((x, i) => {
            const p = typeProblem(out.type, x);
            if (p) details.push({ field: `${at}.options[${i}]`, reason: p });
          });
          out.options = s.options;
        }
      }
      if (s.default !== undefined) {
        const p = typeProblem(out.type, s.default);
        if (p) details.push({ field: `${at}.default`, reason: p });
        else if (out.options && !out.options.some((x) => JSON.stringify(x) === JSON.stringify(s.default))) details.push({ field: `${at}.default`, reason: "must be one of options" });
        out.default = s.default;
      }
      vars[name] = out;
    }
  }
  if (details.length) throw badRequest("Invalid variables_schema", details);
  return { version: 1, vars };
}

/**
 * Validates data against the schema: defaults fill absent values; with enforce, a missing
 * required value, a wrong type or a value outside options is one detail each (400).
 */
export function applySchema(schema: VariablesSchema | null, data: Record<string, unknown>, enforce: boolean): Record<string, unknown> {
  if (!schema) return data;
  const out = structuredClone(data);
  const details: ErrorDetail[] = [];
  for (const [name, spec] of Object.entries(schema.vars)) {
    const path = name.split(".");
    const field = `data.${name}`;
    let v = getPath(out, path);
    if (v === undefined || v === null) {
      if (spec.default !== undefined) {
        setAny(out, path, structuredClone(spec.default));
        continue;
      }
      if (spec.required && enforce) details.push({ field, reason: "required" });
      continue;
    }
    if (!enforce) continue;
    const p = typeProblem(spec.type, v);
    if (p) details.push({ field, reason: p });
    else if (spec.options && !spec.options.some((x) => JSON.stringify(x) === JSON.stringify(v))) details.push({ field, reason: `must be one of ${spec.options.map((x) => JSON.stringify(x)).join(", ")}` });
    v = undefined;
  }
  if (details.length) throw badRequest("data does not match the template's variables_schema", details);
  return out;
}

function setAny(obj: Record<string, unknown>, path: string[], value: unknown): void {
  let cur: Record<string, unknown> = obj;
  for (let i = 0; i < path.length - 1; i++) {
    const k = path[i]!;
    if (cur[k] === undefined || cur[k] === null) cur[k] = {};
    if (typeof cur[k] !== "object") return;
    cur = cur[k] as Record<string, unknown>;
  }
  cur[path[path.length - 1]!] = value;
}
