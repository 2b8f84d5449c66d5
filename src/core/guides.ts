/**
 * The guides (README.md and docs/*.md) served as pages by the server itself: /docs/guides
 * (the index, docs/README.md), /docs/guides/start (the front page and its tour) and
 * /docs/guides/<name>. The markdown is imported as text, so `bun build --compile` embeds it
 * and a binary copied alone to a VM still has its documentation.
 *
 * Rendered with marked (GitHub-flavoured), then sanitized (the documents are ours, but the
 * pages are served with the same strict policy as the console: no script at all). Links
 * between guides become these URLs; a link to another file of the source tree, which the
 * binary does not carry, is rendered as its text.
 */
import { posix } from "node:path";
import type { Tokens } from "marked";
import { defaultOf, lazy } from "./lazy";
import readme from "../../README.md" with { type: "text" };
import index from "../../docs/README.md" with { type: "text" };
import architecture from "../../docs/architecture.md" with { type: "text" };
import auth from "../../docs/auth.md" with { type: "text" };
import community from "../../docs/community.md" with { type: "text" };
import consoleGuide from "../../docs/console.md" with { type: "text" };
import mail from "../../docs/mail.md" with { type: "text" };
import operations from "../../docs/operations.md" with { type: "text" };
import performance from "../../docs/performance.md" with { type: "text" };
import platform from "../../docs/platform.md" with { type: "text" };
import tack from "../../docs/tack.md" with { type: "text" };
import trawl from "../../docs/trawl.md" with { type: "text" };
import waitlist from "../../docs/waitlist.md" with { type: "text" };
import webhooks from "../../docs/webhooks.md" with { type: "text" };

// Loaded by the first guide served, not at start-up (lazy.ts).
const markedLib = lazy(() => require("marked") as typeof import("marked"));
const sanitizeHtml = lazy(() => defaultOf(require("sanitize-html") as typeof import("sanitize-html")));

export const GUIDES_PATH = "/docs/guides";

/** The page name ("" for the index) of each embedded document, by its path in the source tree. */
const SOURCES: Record<string, { name: string; markdown: string }> = {
  "README.md": { name: "start", markdown: readme },
  "docs/README.md": { name: "", markdown: index },
  "docs/architecture.md": { name: "architecture", markdown: architecture },
  "docs/auth.md": { name: "auth", markdown: auth },
  "docs/community.md": { name: "community", markdown: community },
  "docs/console.md": { name: "console", markdown: consoleGuide },
  "docs/mail.md": { name: "mail", markdown: mail },
  "docs/operations.md": { name: "operations", markdown: operations },
  "docs/performance.md": { name: "performance", markdown: performance },
  "docs/platform.md": { name: "platform", markdown: platform },
  "docs/tack.md": { name: "tack", markdown: tack },
  "docs/trawl.md": { name: "trawl", markdown: trawl },
  "docs/waitlist.md": { name: "waitlist", markdown: waitlist },
  "docs/webhooks.md": { name: "webhooks", markdown: webhooks },
};

/** The source paths embedded (a test checks every docs/*.md is among them). */
export const EMBEDDED_GUIDES = Object.keys(SOURCES);

const pageUrl = (name: string) => (name ? `${GUIDES_PATH}/${name}` : GUIDES_PATH);

/**
 * Where a link of the document at `from` goes on this server: another guide's page (with its
 * #fragment), a path of this server for the example origin http://localhost:8080, the link
 * unchanged when it leaves the server (https://...) or stays on the page (#...); null for a
 * file of the source tree the binary does not carry.
 */
export function guideHref(href: string, from: string): string | null {
  if (href.startsWith("#") || /^(https?:|mailto:)/i.test(href)) {
    const local = /^http:\/\/localhost:8080(\/[^#]*)?(#.*)?$/.exec(href);
    return local ? `${local[1] ?? "/"}${local[2] ?? ""}` : href;
  }
  const [path, fragment] = href.split("#", 2);
  const target = posix.normalize(posix.join(posix.dirname(from), decodeURI(path)));
  const page = SOURCES[target] ?? SOURCES[posix.join(target, "README.md")];
  if (!page) return null;
  return `${pageUrl(page.name)}${fragment ? `#${fragment}` : ""}`;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes; repeats numbered. */
export function headingSlug(text: string, seen: Map<string, number>): string {
  const base = text
    .toLowerCase()
    .replace(/<[^>]*>/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .trim()
    .replace(/\s/g, "-");
  const n = seen.get(base) ?? 0;
  seen.set(base, n + 1);
  return n ? `${base}-${n}` : base;
}

const escapeAttr = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function render(markdown: string, from: string): { title: string; html: string } {
  const seen = new Map<string, number>();
  let title = "";
  const marked = new (markedLib().Marked)({
    gfm: true,
    renderer: {
      heading(this: { parser: { parseInline(t: Tokens.Heading["tokens"]): string } }, { tokens, depth, text }: Tokens.Heading) {
        if (depth === 1 && !title) title = text;
        return `<h${depth} id="${escapeAttr(headingSlug(text, seen))}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
      },
      link(this: { parser: { parseInline(t: Tokens.Link["tokens"]): string } }, { href, title: linkTitle, tokens }: Tokens.Link) {
        const inner = this.parser.parseInline(tokens);
        const target = guideHref(href, from);
        if (target === null) return `<span class="source-path" title="${escapeAttr(`${href} (in the source tree)`)}">${inner}</span>`;
        return `<a href="${escapeAttr(target)}"${linkTitle ? ` title="${escapeAttr(linkTitle)}"` : ""}>${inner}</a>`;
      },
    },
  });
  const sanitize = sanitizeHtml();
  const html = sanitize(marked.parse(markdown, { async: false }), {
    allowedTags: [...sanitize.defaults.allowedTags, "img", "h1", "h2"],
    allowedAttributes: { "*": ["id", "class", "title"], a: ["href", "title"], img: ["src", "alt"], td: ["align"], th: ["align"] },
    allowedSchemes: ["http", "https", "mailto"],
  });
  return { title: title || "Bunker", html };
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeAttr(title)} · Bunker</title>
  <link rel="icon" type="image/png" href="/docs/favicon.png">
  <link rel="stylesheet" href="/docs/guides.css">
</head>
<body>
  <nav class="top"><a href="${GUIDES_PATH}">Guides</a> <a href="${GUIDES_PATH}/start">Ten minutes with Bunker</a> <a href="/docs">API reference</a> <a href="/admin/">Console</a></nav>
  <main>
${body}
  </main>
</body>
</html>
`;
}

/** Page name -> its HTML, rendered on first use and kept. */
let pages: Map<string, string> | null = null;
export function guidePages(): Map<string, string> {
  pages ??= new Map(
    Object.entries(SOURCES).map(([from, { name, markdown }]) => {
      const { title, html } = render(markdown, from);
      return [name, page(title, html)];
    }),
  );
  return pages;
}

export const GUIDES_CSP = ["default-src 'none'", "style-src 'self'", "img-src 'self' data:", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"].join("; ");

export const GUIDES_CSS = `:root { color-scheme: light dark; --fg: #1f2328; --bg: #fff; --muted: #59636e; --line: #d1d9e0; --code: #f6f8fa; --link: #0969da; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #3d444d; --code: #151b23; --link: #4493f8; } }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: var(--bg); font: 16px/1.6 system-ui, -apple-system, "Segoe UI", sans-serif; }
nav.top { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; padding: .75rem 1.25rem; border-bottom: 1px solid var(--line); }
nav.top a { font-weight: 600; }
main { max-width: 52rem; margin: 0 auto; padding: 1rem 1.25rem 4rem; overflow-wrap: anywhere; }
a { color: var(--link); }
h1, h2, h3, h4 { line-height: 1.25; margin: 1.8em 0 .6em; }
h1 { font-size: 2rem; } h2 { font-size: 1.5rem; border-bottom: 1px solid var(--line); padding-bottom: .3em; }
code { font: .875em/1.5 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--code); padding: .15em .35em; border-radius: 6px; }
pre { background: var(--code); padding: 1rem; border-radius: 6px; overflow-x: auto; }
pre code { padding: 0; background: none; overflow-wrap: normal; }
table { border-collapse: collapse; display: block; overflow-x: auto; max-width: 100%; }
th, td { border: 1px solid var(--line); padding: .35rem .7rem; text-align: left; vertical-align: top; overflow-wrap: normal; min-width: 6rem; }
td code { white-space: nowrap; }
blockquote { margin: 0; padding: 0 1rem; color: var(--muted); border-left: .25em solid var(--line); }
.source-path { font-style: italic; }
`;
