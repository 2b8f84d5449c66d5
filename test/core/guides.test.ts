/**
 * The guides served by the server (core/guides.ts): /docs/guides and each guide under it,
 * embedded (the binary serves them from an empty folder), every link between them resolving
 * (to a page and, with a #fragment, to a heading on it), no script and a strict policy.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { parseHTML } from "linkedom";
import { EMBEDDED_GUIDES, guideHref, headingSlug } from "../../src/core/guides";
import { startTestApp, type TestApp } from "../helpers/app";

const ROOT = join(import.meta.dir, "../..");
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

const get = (path: string) => app.handle(new Request(`http://localhost${path}`));

/** Each page served, by path, parsed once. */
const pages = new Map<string, Document>();
async function pageAt(path: string): Promise<Document> {
  const cached = pages.get(path);
  if (cached) return cached;
  const r = await get(path);
  expect({ path, status: r.status }).toEqual({ path, status: 200 });
  const doc = parseHTML(await r.text()).document;
  pages.set(path, doc);
  return doc;
}

describe("guides at /docs/guides", () => {
  test("every markdown document of docs/ and the README is embedded", () => {
    const onDisk = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
    expect(EMBEDDED_GUIDES.toSorted()).toEqual(onDisk.toSorted());
  });

  test("the index links every guide; pages are HTML with a strict policy and no script", async () => {
    const r = await get("/docs/guides");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = r.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain("script-src");
    expect(r.headers.get("x-frame-options")).toBe("DENY");
    const doc = parseHTML(await r.text()).document;
    expect(doc.querySelectorAll("script").length).toBe(0);
    const hrefs = [...doc.querySelectorAll("a")].map((a) => a.getAttribute("href"));
    for (const file of EMBEDDED_GUIDES.filter((f) => f.startsWith("docs/") && f !== "docs/README.md")) {
      expect(hrefs).toContain(`/docs/guides/${file.slice(5, -3)}`);
    }
    const css = await get("/docs/guides.css");
    expect({ status: css.status, type: css.headers.get("content-type") }).toEqual({ status: 200, type: "text/css; charset=utf-8" });
  });

  test("every link of every guide resolves: guide pages, their headings, this server's pages", async () => {
    const start = ["/docs/guides", ...EMBEDDED_GUIDES.map((f) => guideHref(f, "README.md")!)];
    const broken: string[] = [];
    for (const path of new Set(start)) {
      const doc = await pageAt(path);
      expect(doc.querySelectorAll("script, iframe, [onload], [onclick]").length).toBe(0);
      // A link to a markdown file that is not embedded would be shown as plain text: a broken link.
      for (const span of doc.querySelectorAll(".source-path")) {
        if (/\.md\b/.test(span.getAttribute("title") ?? "")) broken.push(`${path}: ${span.getAttribute("title")}`);
      }
      for (const a of doc.querySelectorAll("a")) {
        const href = a.getAttribute("href") ?? "";
        if (/^(https?:|mailto:)/.test(href)) continue; // leaves the server: not ours to check offline
        const [target, fragment] = href.split("#", 2);
        const where = target === "" ? path : target;
        if (!where.startsWith("/")) {
          broken.push(`${path}: ${href} (not a path of this server)`);
          continue;
        }
        if (where.startsWith("/docs/guides")) {
          const page = await pageAt(where);
          if (fragment && !page.getElementById(decodeURIComponent(fragment))) broken.push(`${path}: ${href} (no such heading)`);
        } else {
          const r = await get(where);
          if (r.status !== 200) broken.push(`${path}: ${href} (${r.status})`);
        }
      }
    }
    expect(broken).toEqual([]);
  }, 60_000);

  test("the API reference page links the guides", async () => {
    const doc = parseHTML(await (await get("/docs")).text()).document;
    const hrefs = [...doc.querySelectorAll("a")].map((a) => a.getAttribute("href"));
    expect(hrefs).toContain("/docs/guides");
  });

  test("an unknown guide is a 404 with the error body", async () => {
    const r = await get("/docs/guides/nope");
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
  });
});

describe("links and headings", () => {
  test("links between guides become pages; source files stay text; the example origin becomes this server", () => {
    expect(guideHref("mail.md", "docs/waitlist.md")).toBe("/docs/guides/mail");
    expect(guideHref("mail.md#sending", "docs/waitlist.md")).toBe("/docs/guides/mail#sending");
    expect(guideHref("docs/mail.md", "README.md")).toBe("/docs/guides/mail");
    expect(guideHref("../README.md", "docs/mail.md")).toBe("/docs/guides/start");
    expect(guideHref("README.md", "docs/mail.md")).toBe("/docs/guides");
    expect(guideHref("docs/", "README.md")).toBe("/docs/guides");
    expect(guideHref("../scripts/bench/mail.ts", "docs/performance.md")).toBeNull();
    expect(guideHref("http://localhost:8080/admin/", "README.md")).toBe("/admin/");
    expect(guideHref("https://github.com/wg/wrk", "docs/performance.md")).toBe("https://github.com/wg/wrk");
    expect(guideHref("#method", "docs/performance.md")).toBe("#method");
  });

  test("heading anchors follow GitHub's: lower case, punctuation dropped, repeats numbered", () => {
    const seen = new Map<string, number>();
    expect(headingSlug("Databases: SQLite or PostgreSQL", seen)).toBe("databases-sqlite-or-postgresql");
    expect(headingSlug("`bunker listen`", seen)).toBe("bunker-listen");
    expect(headingSlug("Bench (`npm run bench -- tack`)", seen)).toBe("bench-npm-run-bench----tack");
    expect(headingSlug("Bench (`npm run bench -- tack`)", seen)).toBe("bench-npm-run-bench----tack-1");
  });
});
