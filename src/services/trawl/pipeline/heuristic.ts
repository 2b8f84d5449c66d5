/**
 * The offline extractor (no LLM): structured data already in the page, mapped onto the
 * schema's properties by name and type.
 *
 * Sources, in priority order (the first value that fits a property's type wins):
 * JSON-LD (schema.org, @graph, ItemList), microdata (itemscope/itemprop), OpenGraph and
 * meta tags, definition lists (dt/dd), two-column tables (key/value), the page title and
 * h1. Lists: tables with a header row, repeated JSON-LD nodes and microdata items are
 * record groups; an array-of-objects property takes the group whose keys match its item
 * properties best. JSON responses are read as one record (and their arrays as groups).
 *
 * Names match after normalising (lower case, letters and digits only), then through a small
 * synonym table (price ~ offers.price, title ~ name/headline...), then by the property
 * name's first word ("price_usd" -> "price").
 */
import { jsonrepair } from "jsonrepair";
import { isObject, type JsonObject } from "../schema";
import type { Doc } from "./html";

type Source = "json-ld" | "microdata" | "meta" | "dl" | "table" | "title" | "json";

interface Value {
  v: unknown;
  src: Source;
}

export interface Candidates {
  /** normalised key -> values in priority order */
  flat: Map<string, Value[]>;
  /** record groups (lists): each record maps normalised keys to values */
  groups: { src: Source; records: Map<string, Value[]>[] }[];
}

export const norm = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, "");

const SYNONYMS: Record<string, string[]> = {
  name: ["title", "headline", "productname", "ogtitle"],
  title: ["name", "headline", "ogtitle"],
  headline: ["title", "name"],
  price: ["offersprice", "offerslowprice", "amount", "cost", "productpriceamount", "ogpriceamount"],
  currency: ["pricecurrency", "offerspricecurrency", "productpricecurrency"],
  pricecurrency: ["offerspricecurrency", "currency"],
  image: ["imageurl", "ogimage", "thumbnail", "thumbnailurl", "twitterimage"],
  url: ["link", "canonical", "ogurl", "href"],
  link: ["url", "href"],
  author: ["authorname", "creator", "byline", "articleauthor"],
  date: ["datepublished", "publishedtime", "articlepublishedtime", "published", "publishedat"],
  published: ["datepublished", "publishedtime", "articlepublishedtime", "publishedat", "date"],
  publishedat: ["datepublished", "publishedtime", "articlepublishedtime", "date"],
  datepublished: ["publishedtime", "articlepublishedtime", "date"],
  description: ["summary", "ogdescription", "twitterdescription", "abstract"],
  summary: ["description", "ogdescription"],
  sku: ["productid", "mpn", "gtin"],
  brand: ["brandname", "manufacturer"],
  rating: ["ratingvalue", "aggregateratingratingvalue"],
  reviewcount: ["aggregateratingreviewcount", "reviews"],
  availability: ["offersavailability", "stock", "instock"],
  instock: ["availability", "offersavailability", "stock"],
  available: ["availability", "offersavailability", "instock"],
};

function add(map: Map<string, Value[]>, key: string, v: unknown, src: Source) {
  const k = norm(key);
  if (!k || v === undefined || v === null || v === "") return;
  let list = map.get(k);
  if (!list) map.set(k, (list = []));
  list.push({ v, src });
}

/** Adds an object's properties at every depth: "offers.price" as "offersprice" and the leaf "price". */
function addObject(map: Map<string, Value[]>, o: JsonObject, src: Source, prefix = "", depth = 0) {
  for (const [k, v] of Object.entries(o)) {
    if (k.startsWith("@") && k !== "@type") continue;
    const key = prefix ? `${prefix}.${k}` : k;
    if (Array.isArray(v)) {
      add(map, key, v, src);
      for (const x of v) if (isObject(x) && depth < 3) addObject(map, x, src, key, depth + 1);
      continue;
    }
    if (isObject(v)) {
      add(map, key, v, src);
      if (depth < 3) addObject(map, v, src, key, depth + 1);
      if (prefix && depth < 3) addObject(map, v, src, k, depth + 1);
      continue;
    }
    add(map, key, v, src);
    if (prefix) add(map, k, v, src);
  }
}

const text = (el: Doc): string => String(el?.textContent ?? "").replace(/\s+/g, " ").trim();

function jsonLdNodes(doc: Doc): JsonObject[] {
  const nodes: JsonObject[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (!isObject(v)) return;
    if (Array.isArray(v["@graph"])) return (v["@graph"] as unknown[]).forEach(walk);
    nodes.push(v);
  };
  for (const s of doc.querySelectorAll('script[type="application/ld+json"]')) {
    const raw = String(s.textContent ?? "").trim();
    if (!raw) continue;
    try {
      walk(JSON.parse(raw));
    } catch {
      try {
        walk(JSON.parse(jsonrepair(raw)));
      } catch {
        /* unreadable block: skipped */
      }
    }
  }
  return nodes;
}

function microdataItem(el: Doc): JsonObject {
  const out: JsonObject = {};
  const visit = (node: Doc) => {
    for (const child of node.children ?? []) {
      const prop = child.getAttribute?.("itemprop");
      if (prop) {
        const value = child.hasAttribute("itemscope")
          ? microdataItem(child)
          : (child.getAttribute("content") ?? child.getAttribute("datetime") ?? (/^(A|LINK)$/.test(child.tagName) ? child.getAttribute("href") : null) ?? (/^(IMG|SOURCE)$/.test(child.tagName) ? child.getAttribute("src") : null) ?? (child.tagName === "META" ? "" : text(child)));
        for (const p of String(prop).split(/\s+/)) if (!(p in out)) out[p] = value;
      }
      if (!child.hasAttribute?.("itemscope")) visit(child);
    }
  };
  visit(el);
  return out;
}

function tableCells(row: Doc): Doc[] {
  return [...row.children].filter((c: Doc) => c.tagName === "TD" || c.tagName === "TH");
}

/** Everything the extractor may use from an HTML page. */
export function candidatesFromHtml(doc: Doc): Candidates {
  const flat = new Map<string, Value[]>();
  const groups: Candidates["groups"] = [];

  const nodes = jsonLdNodes(doc);
  for (const n of nodes) addObject(flat, n, "json-ld");
  // Repeated nodes of one @type, and ItemList elements, are lists.
  const byType = new Map<string, Map<string, Value[]>[]>();
  for (const n of nodes) {
    const items = Array.isArray(n.itemListElement) ? (n.itemListElement as unknown[]) : null;
    if (items) {
      const recs = items.filter(isObject).map((it) => recordOf(isObject(it.item) ? { ...it.item, position: it.position } : it, "json-ld"));
      if (recs.length) groups.push({ src: "json-ld", records: recs });
      continue;
    }
    const type = String(n["@type"] ?? "");
    if (!byType.has(type)) byType.set(type, []);
    byType.get(type)!.push(recordOf(n, "json-ld"));
  }
  for (const recs of byType.values()) if (recs.length > 1) groups.push({ src: "json-ld", records: recs });

  const tops = [...doc.querySelectorAll("[itemscope]")].filter((el: Doc) => !el.parentElement?.closest("[itemscope]"));
  const microByType = new Map<string, Map<string, Value[]>[]>();
  for (const el of tops) {
    const item = microdataItem(el);
    addObject(flat, item, "microdata");
    const type = String(el.getAttribute("itemtype") ?? "");
    if (!microByType.has(type)) microByType.set(type, []);
    microByType.get(type)!.push(recordOf(item, "microdata"));
  }
  for (const recs of microByType.values()) if (recs.length > 1) groups.push({ src: "microdata", records: recs });

  for (const m of doc.querySelectorAll("meta[content]")) {
    const key = m.getAttribute("property") ?? m.getAttribute("name") ?? m.getAttribute("itemprop");
    if (!key) continue;
    const content = m.getAttribute("content");
    add(flat, key, content, "meta");
    const short = key.replace(/^(og|article|product|twitter|book|profile|music|video):/, "");
    if (short !== key) add(flat, short, content, "meta");
  }
  const canonical = doc.querySelector('link[rel="canonical"]')?.getAttribute("href");
  if (canonical) add(flat, "canonical", canonical, "meta");

  for (const dl of doc.querySelectorAll("dl")) {
    let key: string | null = null;
    for (const c of dl.children) {
      if (c.tagName === "DT") key = text(c);
      else if (c.tagName === "DD" && key) add(flat, key, text(c), "dl");
    }
  }

  for (const table of doc.querySelectorAll("table")) {
    const rows = [...table.querySelectorAll("tr")];
    if (!rows.length) continue;
    const head = tableCells(rows[0]);
    const headerRow = head.length > 1 && head.every((c: Doc) => c.tagName === "TH");
    if (headerRow && rows.length > 1) {
      const keys = head.map(text);
      const recs = rows.slice(1).map((r) => {
        const rec = new Map<string, Value[]>();
        tableCells(r).forEach((c: Doc, i: number) => keys[i] && add(rec, keys[i], text(c), "table"));
        return rec;
      });
      groups.push({ src: "table", records: recs.filter((r) => r.size) });
      continue;
    }
    for (const r of rows) {
      const cells = tableCells(r);
      if (cells.length === 2) add(flat, text(cells[0]), text(cells[1]), "table");
    }
  }

  const h1 = doc.querySelector("h1");
  if (h1) for (const k of ["title", "name", "headline"]) add(flat, k, text(h1), "title");
  const title = doc.querySelector("title");
  if (title) add(flat, "title", text(title), "title");
  return { flat, groups };
}

function recordOf(o: JsonObject, src: Source): Map<string, Value[]> {
  const rec = new Map<string, Value[]>();
  addObject(rec, o, src);
  return rec;
}

/** A JSON response: its object as the flat source, arrays of objects as groups. */
export function candidatesFromJson(body: string): Candidates {
  const flat = new Map<string, Value[]>();
  const groups: Candidates["groups"] = [];
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch {
    return { flat, groups };
  }
  const walk = (x: unknown, depth: number) => {
    if (Array.isArray(x)) {
      const recs = x.filter(isObject).map((o) => recordOf(o, "json"));
      if (recs.length) groups.push({ src: "json", records: recs });
      return;
    }
    if (!isObject(x) || depth > 2) return;
    for (const y of Object.values(x)) if (Array.isArray(y) || isObject(y)) walk(y, depth + 1);
  };
  if (isObject(v)) addObject(flat, v, "json");
  walk(v, 0);
  return { flat, groups };
}

// ------------------------------------------------------------------ mapping onto the schema

export interface Mapped {
  value: JsonObject;
  /** property -> source it came from (top-level properties) */
  sources: Record<string, Source>;
}

function resolveRef(root: JsonObject, s: unknown): JsonObject {
  let cur = s;
  for (let i = 0; i < 5 && isObject(cur) && typeof cur.$ref === "string" && cur.$ref.startsWith("#/"); i++) {
    let at: unknown = root;
    for (const part of (cur.$ref as string).slice(2).split("/")) at = isObject(at) ? at[part.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined;
    cur = at;
  }
  return isObject(cur) ? cur : {};
}

function typeOf(s: JsonObject): string {
  const t = s.type;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) return (t.find((x) => x !== "null") as string) ?? "string";
  if (s.properties) return "object";
  if (s.items) return "array";
  if (Array.isArray(s.enum)) return typeof s.enum[0] === "number" ? "number" : "string";
  return "string";
}

function keysFor(name: string): string[] {
  const n = norm(name);
  const first = norm(name.split(/[_\-\s]|(?=[A-Z])/)[0] ?? "");
  const keys = [n, ...(SYNONYMS[n] ?? [])];
  if (first && first !== n) keys.push(first, ...(SYNONYMS[first] ?? []));
  return [...new Set(keys)];
}

const NUM_RE = /-?\d[\d,\s]*(\.\d+)?|-?\.\d+/;

function coerce(v: unknown, s: JsonObject): unknown {
  const type = typeOf(s);
  if (isObject(v) && type !== "object") {
    // schema.org values that are objects: {name}, {url}, {value}, {price}.
    for (const k of ["name", "value", "url", "price", "@id"]) if (v[k] !== undefined) return coerce(v[k], s);
    return undefined;
  }
  if (Array.isArray(v) && type !== "array") return v.length ? coerce(v[0], s) : undefined;
  switch (type) {
    case "number":
    case "integer": {
      let n: number;
      if (typeof v === "number") n = v;
      else {
        const m = NUM_RE.exec(String(v));
        if (!m) return undefined;
        n = Number(m[0].replace(/[,\s]/g, ""));
      }
      if (!Number.isFinite(n)) return undefined;
      return type === "integer" ? (Number.isInteger(n) ? n : Math.round(n)) : n;
    }
    case "boolean": {
      if (typeof v === "boolean") return v;
      const str = String(v).toLowerCase();
      if (/^(true|yes|1|y)$|instock|in stock|available/.test(str)) return true;
      if (/^(false|no|0|n)$|outofstock|out of stock|unavailable|sold out/.test(str)) return false;
      return undefined;
    }
    case "string": {
      if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") return undefined;
      const str = String(v).trim();
      if (!str) return undefined;
      if (Array.isArray(s.enum)) {
        const hit = (s.enum as unknown[]).find((e) => typeof e === "string" && (norm(e) === norm(str) || norm(str).endsWith(norm(e))));
        return hit;
      }
      return str;
    }
    default:
      return undefined;
  }
}

function lookup(map: Map<string, Value[]>, name: string, s: JsonObject, prefix: string): Value | null {
  const keys = keysFor(name);
  const tries = prefix ? [...keys.map((k) => norm(prefix) + k), ...keys] : keys;
  for (const k of tries) {
    for (const c of map.get(k) ?? []) {
      const v = coerce(c.v, s);
      if (v !== undefined) return { v, src: c.src };
    }
  }
  return null;
}

function mapObject(root: JsonObject, schema: JsonObject, map: Map<string, Value[]>, groups: Candidates["groups"], prefix: string, depth: number): Mapped {
  const value: JsonObject = {};
  const sources: Record<string, Source> = {};
  const props = isObject(schema.properties) ? schema.properties : {};
  for (const [name, raw] of Object.entries(props)) {
    const s = resolveRef(root, raw);
    const type = typeOf(s);
    if (type === "array") {
      const items = resolveRef(root, s.items);
      if (typeOf(items) === "object") {
        const best = bestGroup(root, items, groups, name);
        if (best) {
          value[name] = best.items;
          sources[name] = best.src;
        }
        continue;
      }
      const found = lookupArray(map, name, items);
      if (found) {
        value[name] = found.v;
        sources[name] = found.src;
      }
      continue;
    }
    if (type === "object") {
      if (depth > 3) continue;
      const inner = mapObject(root, s, map, groups, name, depth + 1);
      if (Object.keys(inner.value).length) {
        value[name] = inner.value;
        sources[name] = Object.values(inner.sources)[0];
      }
      continue;
    }
    const hit = lookup(map, name, s, prefix);
    if (hit) {
      value[name] = hit.v;
      sources[name] = hit.src;
    }
  }
  return { value, sources };
}

function lookupArray(map: Map<string, Value[]>, name: string, items: JsonObject): Value | null {
  for (const k of keysFor(name)) {
    for (const c of map.get(k) ?? []) {
      const list = Array.isArray(c.v) ? c.v : typeof c.v === "string" ? c.v.split(/\s*[,;]\s*/) : [c.v];
      const out = list.map((x) => coerce(x, items)).filter((x) => x !== undefined);
      if (out.length) return { v: out, src: c.src };
    }
  }
  return null;
}

/** The record group whose keys cover the item properties best; its records mapped. */
function bestGroup(root: JsonObject, items: JsonObject, groups: Candidates["groups"], _name: string): { items: JsonObject[]; src: Source } | null {
  let best: { items: JsonObject[]; src: Source; score: number } | null = null;
  for (const g of groups) {
    const mapped = g.records.map((r) => mapObject(root, items, r, [], "", 1).value).filter((o) => Object.keys(o).length);
    if (!mapped.length) continue;
    const score = mapped.reduce((n, o) => n + Object.keys(o).length, 0) / g.records.length;
    if (!best || score > best.score) best = { items: mapped, src: g.src, score };
  }
  return best ? { items: best.items, src: best.src } : null;
}

/** Maps the candidates onto the job's schema (root type object). */
export function mapToSchema(schema: JsonObject, c: Candidates): Mapped {
  return mapObject(schema, schema, c.flat, c.groups, "", 0);
}
