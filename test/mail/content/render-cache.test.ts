/**
 * The compiled-template cache of render(): keyed by every source, so renders with different
 * partials, footers or roots never share compiled code, and data stays per call.
 */
import { describe, expect, test } from "bun:test";
import { resolveBrand } from "../../../src/services/mail/content/brand";
import { COMPILED_CACHE_MAX, render, type Includable, type RenderInput } from "../../../src/services/mail/content/render";

const brand = (footer_address: string | null = null) => resolveBrand({ footer_address } as never, "Acme");
const input = (over: Partial<RenderInput> = {}): RenderInput => ({
  rootId: "template.welcome",
  source: { subject: "Hi {{name}}", body_html: "<p>{{> partial.greet}} {{name}}</p>{{> bp.footer}}", body_text: "{{name}} & {{> partial.greet}}" },
  includables: [{ kind: "partial", name: "greet", body_html: "Hello" }],
  brand: brand(),
  data: { name: "<Ann>" },
  missing: "empty",
  inline: false,
  ...over,
});
const greet = (body_html: string): Includable[] => [{ kind: "partial", name: "greet", body_html }];

describe("compiled template cache", () => {
  test("same sources, different data: each render gets its own data and escaping mode", () => {
    const a = render(input());
    const b = render(input({ data: { name: "Bob" } }));
    expect(a.subject).toBe("Hi <Ann>");
    expect(a.html).toContain("<p>Hello &lt;Ann&gt;</p>");
    expect(a.text).toBe("<Ann> & Hello");
    expect(b.html).toContain("<p>Hello Bob</p>");
  });

  test("a different partial source, footer or root is a different entry", () => {
    expect(render(input({ includables: greet("Bonjour") })).html).toContain("<p>Bonjour &lt;Ann&gt;</p>");
    expect(render(input()).html).toContain("<p>Hello &lt;Ann&gt;</p>");
    expect(render(input({ brand: brand("1 Main St") })).html).toContain("1 Main St");
    expect(render(input()).html).not.toContain("1 Main St");
    expect(render(input({ rootId: "template.other", includables: greet("Hey") })).html).toContain("<p>Hey");
  });

  test("errors are not cached; placeholders follow the cached variables; prototype access stays off", () => {
    const bad = input({ includables: [] });
    for (let i = 0; i < 2; i++) expect(() => render(bad)).toThrow(/Unknown partial partial.greet/);
    expect(render(input({ data: {}, missing: "placeholder" })).subject).toBe("Hi [name]");
    expect(render(input({ data: { name: "Cy" }, missing: "placeholder" })).subject).toBe("Hi Cy");
    const proto = input({ source: { subject: "{{constructor.name}}{{__proto__}}", body_html: "{{name.constructor}}", body_text: null } });
    for (let i = 0; i < 2; i++) expect(render(proto).subject).toBe("");
  });

  test("the cache is bounded: more distinct templates than it holds still render", () => {
    for (let i = 0; i < COMPILED_CACHE_MAX + 20; i++) expect(render(input({ source: { subject: `S${i} {{name}}`, body_html: "x", body_text: "y" } })).subject).toBe(`S${i} <Ann>`);
    expect(render(input()).html).toContain("<p>Hello &lt;Ann&gt;</p>");
  });
});
