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
 * The candidates are mapped onto the job's schema by map.ts.
 */
import { jsonrepair } from "jsonrepair";
import { isObject, type JsonObject } from "../../schema";
import type { Doc } from "./html";

export type Source = "json-ld" | "microdata" | "meta" | "dl" | "table" | "title" | "json";

export interface Value {
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
