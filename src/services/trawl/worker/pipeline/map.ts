/**
 * The offline extractor's second half: candidates (heuristic.ts) mapped onto the job's
 * schema. Names match after normalising (lower case, letters and digits only), then through
 * a small synonym table (price ~ offers.price, title ~ name/headline...), then by the
 * property name's first word ("price_usd" -> "price"); values are coerced to the property's
 * type. Arrays of objects take the record group whose keys cover the item properties best.
 */
import { isObject, type JsonObject } from "../../schema";
import { norm, type Candidates, type Source, type Value } from "./heuristic";

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
