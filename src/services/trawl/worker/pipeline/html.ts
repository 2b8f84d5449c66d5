/**
 * HTML to what the extractors read: a DOM (linkedom, no browser), clean markdown of the main
 * content (Mozilla Readability, the Firefox reader view's algorithm, then turndown), chunks
 * sized for the model's context, and the page's links (pagination and links whose text
 * matches the job's description), restricted to the job's origins.
 */
import type TurndownService from "turndown";
import { defaultOf, lazy } from "../../../../core/lazy";

// Loaded by the first page an extraction reads, not at start-up (core/lazy.ts).
const readability = lazy(() => require("@mozilla/readability") as typeof import("@mozilla/readability"));
const linkedom = lazy(() => require("linkedom") as typeof import("linkedom"));

/** Characters per chunk sent to the model (about 3,000 tokens), and chunks per page at most. */
export const CHUNK_CHARS = 12_000;
export const CHUNKS_PER_PAGE = 4;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Doc = any;

export const parseDocument = (html: string): Doc => linkedom().parseHTML(html).document;

const turndown = lazy(() => {
  const Turndown = defaultOf(require("turndown") as typeof import("turndown"));
  const service = new Turndown({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" });
  service.remove(["script", "style", "noscript", "iframe", "svg"] as never);
  // Tables as GFM pipe tables (turndown alone flattens them to loose lines, losing the columns).
  service.addRule("table", tableRule);
  return service;
});

const tableRule: TurndownService.Rule = {
  filter: "table",
  replacement: (_content, node) => {
    const cell = (c: Doc) => String(c.textContent ?? "").replace(/\s+/g, " ").trim().replace(/\|/g, "\\|");
    const rows: string[][] = Array.from((node as Doc).getElementsByTagName("tr") as ArrayLike<Doc>).map((tr) =>
      Array.from(tr.childNodes as ArrayLike<Doc>).filter((c) => c.nodeName === "TD" || c.nodeName === "TH").map(cell),
    );
    if (!rows.length) return "";
    const width = Math.max(...rows.map((r) => r.length));
    const line = (r: string[]) => `| ${[...r, ...Array(width - r.length).fill("")].join(" | ")} |`;
    return `\n\n${[line(rows[0]), line(Array(width).fill("---")), ...rows.slice(1).map(line)].join("\n")}\n\n`;
  },
};

/** Markdown of the main content (the whole body when Readability finds no article). */
export function toMarkdown(html: string): { title: string; markdown: string } {
  const doc = parseDocument(html);
  const title = String(doc.querySelector("title")?.textContent ?? "").trim();
  let content: string | null = null;
  try {
    const article = new (readability().Readability)(doc).parse();
    // Readability drops tables and lists it deems boilerplate on short pages: keep the body then.
    if (article?.content && (article.textContent ?? "").length > 200) content = article.content;
  } catch {
    content = null;
  }
  const source = content ?? parseDocument(html).body?.innerHTML ?? html;
  const markdown = turndown().turndown(source).replace(/\n{3,}/g, "\n\n").trim();
  return { title, markdown };
}

/** Splits at paragraph boundaries into chunks of at most `size` characters. */
export function chunk(text: string, size = CHUNK_CHARS, max = CHUNKS_PER_PAGE): { chunks: string[]; dropped: boolean } {
  const chunks: string[] = [];
  let cur = "";
  for (const para of text.split(/\n\n/)) {
    const pieces = para.length > size ? para.match(new RegExp(`[\\s\\S]{1,${size}}`, "g"))! : [para];
    for (const p of pieces) {
      if (cur && cur.length + p.length + 2 > size) {
        chunks.push(cur);
        cur = "";
      }
      cur = cur ? `${cur}\n\n${p}` : p;
    }
  }
  if (cur) chunks.push(cur);
  return { chunks: chunks.slice(0, max), dropped: chunks.length > max };
}

const STOP = new Set("the and for with from that this what which each all any are was were into onto about their there page pages list extract find get give show".split(" "));

export const keywords = (description: string): string[] =>
  [...new Set(description.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length >= 4 && !STOP.has(w)))];

export interface Links {
  /** rel=next or "next" anchors: more of the same listing. */
  pagination: string[];
  /** Other links whose text or path shares words with the description, best first. */
  relevant: string[];
}

/** Links of the page within `origins`, fragment removed. */
export function findLinks(doc: Doc, baseUrl: string, origins: Set<string>, words: string[]): Links {
  const abs = (href: string | null): string | null => {
    if (!href) return null;
    try {
      const u = new URL(href, baseUrl);
      if (u.protocol !== "http:" && u.protocol !== "https:") return null;
      u.hash = "";
      return origins.has(u.origin) ? u.href : null;
    } catch {
      return null;
    }
  };
  const pagination = new Set<string>();
  for (const el of doc.querySelectorAll('link[rel~="next"], a[rel~="next"]')) {
    const u = abs(el.getAttribute("href"));
    if (u) pagination.add(u);
  }
  const scored: { url: string; score: number }[] = [];
  for (const a of doc.querySelectorAll("a[href]")) {
    const u = abs(a.getAttribute("href"));
    if (!u || u === baseUrl) continue;
    const text = `${a.textContent ?? ""} ${a.getAttribute("aria-label") ?? ""}`.trim().toLowerCase();
    if (/^(next( page)?|more|older|›|»|>|→)$/.test(text)) {
      pagination.add(u);
      continue;
    }
    const hay = `${text} ${new URL(u).pathname.toLowerCase()}`;
    const score = words.filter((w) => hay.includes(w)).length;
    if (score > 0) scored.push({ url: u, score });
  }
  scored.sort((a, b) => b.score - a.score);
  const relevant = [...new Set(scored.map((s) => s.url))].filter((u) => !pagination.has(u)).slice(0, 10);
  return { pagination: [...pagination], relevant };
}
