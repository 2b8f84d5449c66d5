/** Pure parts of the extraction pipeline: robots.txt rules, chunking, answer parsing, merging, links. */
import { describe, expect, test } from "bun:test";
import { isAllowed, parseRobots } from "../../src/services/trawl/worker/pipeline/fetch";
import { chunk, findLinks, keywords, parseDocument } from "../../src/services/trawl/worker/pipeline/html";
import { parseAnswer } from "../../src/services/trawl/worker/pipeline/llm";
import { dropNulls, merge } from "../../src/services/trawl/worker/pipeline/merge";

describe("robots.txt", () => {
  const txt = `# comment
User-agent: *
Disallow: /private
Allow: /private/open
Disallow: /*.pdf$

User-agent: BunkerTrawl
User-agent: other
Disallow: /only-for-us
`;
  test("our own group wins over *; longest match; allow wins a tie; $ and * patterns", () => {
    const ours = parseRobots(txt, "bunkertrawl");
    expect(isAllowed(ours, "/only-for-us/x")).toBe(false);
    expect(isAllowed(ours, "/private")).toBe(true);
    const star = parseRobots(txt, "somebot");
    expect(isAllowed(star, "/private/x")).toBe(false);
    expect(isAllowed(star, "/private/open/x")).toBe(true);
    expect(isAllowed(star, "/doc.pdf")).toBe(false);
    expect(isAllowed(star, "/doc.pdf?x")).toBe(true);
    expect(isAllowed(parseRobots("User-agent: *\nDisallow:\n", "x"), "/a")).toBe(true);
    expect(isAllowed(parseRobots("", "x"), "/a")).toBe(true);
    expect(isAllowed(parseRobots("User-agent: *\nDisallow: /\nAllow: /\n", "x"), "/a")).toBe(true);
  });
});

describe("chunks, answers, merging, links", () => {
  test("chunks keep paragraphs whole up to the size, cut longer ones, and stop at the maximum", () => {
    expect(chunk("a\n\nb\n\nc", 4).chunks).toEqual(["a\n\nb", "c"]);
    expect(chunk("x".repeat(10), 4).chunks).toEqual(["xxxx", "xxxx", "xx"]);
    expect(chunk("x".repeat(10), 2, 3)).toEqual({ chunks: ["xx", "xx", "xx"], dropped: true });
  });

  test("answers: plain, fenced, repaired; not an object is null", () => {
    expect(parseAnswer('{"a":1}')).toEqual({ value: { a: 1 }, repaired: false });
    expect(parseAnswer('```json\n{"a":1}\n```')).toEqual({ value: { a: 1 }, repaired: false });
    expect(parseAnswer("{a: 1, 'b': 'x',}")).toEqual({ value: { a: 1, b: "x" }, repaired: true });
    expect(parseAnswer("[1,2]")).toBeNull();
    expect(parseAnswer("sorry, I cannot")).toBeNull();
  });

  test("merge: first scalar wins, arrays concatenate without duplicates (key order ignored), objects merge", () => {
    const a = { name: "A", tags: ["x"], items: [{ n: 1, p: 2 }], meta: { a: 1 }, empty: "" };
    const b = { name: "B", tags: ["x", "y"], items: [{ p: 2, n: 1 }, { n: 3 }], meta: { a: 2, b: 3 }, empty: "filled" };
    expect(merge(a, b)).toEqual({ name: "A", tags: ["x", "y"], items: [{ n: 1, p: 2 }, { n: 3 }], meta: { a: 1, b: 3 }, empty: "filled" });
    expect(dropNulls({ a: null, b: { c: null, d: 1 }, e: [null, 2], f: " " })).toEqual({ b: { d: 1 }, e: [2] });
  });

  test("links: only within the job's origins; pagination apart; description words rank the rest", () => {
    const doc = parseDocument(`<a href="/pricing">Pricing plans</a><a href="https://other.example/pricing">Pricing elsewhere</a>
      <a href="/blog">Blog</a><a href="/list?page=2" rel="next">2</a><a href="/list?page=3">Next</a><a href="mailto:x@y">mail</a><a href="/pricing#top">again</a>`);
    const links = findLinks(doc, "https://acme.example/list", new Set(["https://acme.example"]), keywords("Extract the pricing plans"));
    expect(links.pagination).toEqual(["https://acme.example/list?page=2", "https://acme.example/list?page=3"]);
    expect(links.relevant).toEqual(["https://acme.example/pricing"]);
  });
});
