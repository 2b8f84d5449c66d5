/**
 * Mail content part end to end over the app's HTTP pipeline: brand (validation, footer
 * sanitising by refusal, reset), templates (name boundaries, kind immutability, list
 * filters and limit clamp, tags), rendering (partials, brand tokens, recursion, schema
 * errors, CSS inlining, derived text), variables, lint findings, renderForSend, isolation.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { renderForSend } from "../../../src/services/mail/content/part";
import { ownerWithKey, startTestApp, type TestApp } from "../../helpers/app";
import { inProcess } from "../../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.stop();
});

const base = (ws: string) => `/mail/v1/workspaces/${ws}`;
async function owner() {
  const { token, ws } = await ownerWithKey(app);
  const call = (method: string, path: string, body?: unknown) => app.call(method, `${base(ws.id)}${path}`, { token, body });
  return { token, ws, call };
}
async function tpl(call: Awaited<ReturnType<typeof owner>>["call"], body: Record<string, unknown>) {
  const r = await call("POST", "/templates", { subject: body.kind && body.kind !== "template" ? "" : "Hello", ...body });
  if (r.status !== 201) throw new Error(`template create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

describe("brand", () => {
  test("GET defaults, PUT replaces (omitted fields reset), DELETE reverts", async () => {
    const { call, ws } = await owner();
    const g = await call("GET", "/brand");
    expect(g.status).toBe(200);
    expect(g.body.raw.primary_color).toBeNull();
    expect(g.body.resolved.primary_color).toBe("#2563EB");
    expect(g.body.resolved.brand_name).toBe(`Workspace ${ws.slug}`);
    const p = await call("PUT", "/brand", { primary_color: "#112233", button_radius: "4px", social_links: { github: "https://github.com/acme" }, extras: { plan: "pro" } });
    expect(p.status).toBe(200);
    expect(p.body.raw).toMatchObject({ primary_color: "#112233", button_radius: "4px", text_color: null, social_links: { github: "https://github.com/acme" }, extras: { plan: "pro" } });
    expect(p.body.resolved.primary_color).toBe("#112233");
    const p2 = await call("PUT", "/brand", { text_color: "#000000" });
    expect(p2.body.raw.primary_color).toBeNull();
    expect(p2.body.raw.social_links).toBeNull();
    expect(p2.body.resolved.primary_color).toBe("#2563EB");
    expect(p2.body.raw.text_color).toBe("#000000");
    const d = await call("DELETE", "/brand");
    expect(d.status).toBe(204);
    const g2 = await call("GET", "/brand");
    expect(g2.body.raw.text_color).toBeNull();
    expect(g2.body.resolved.text_color).toBe("#111827");
  });

  test("validation: one detail per problem; unknown social key names the valid set", async () => {
    const { call } = await owner();
    const r = await call("PUT", "/brand", {
      primary_color: "blue",
      secondary_color: "#12345",
      button_radius: "4 px",
      container_max_width: "600px;",
      logo_url: "http://acme.example/logo.png",
      social_links: { myspace: "https://myspace.com/x", x: "http://x.com/acme" },
      extras: { "bad key": 1, ok: { nested: true } },
      colour: "#000000",
    });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("VALIDATION_ERROR");
    const fields = r.body.error.details.map((d: any) => d.field).sort();
    expect(fields).toEqual(["button_radius", "colour", "container_max_width", "extras.bad key", "extras.ok", "logo_url", "primary_color", "secondary_color", "social_links.myspace", "social_links.x"].sort());
    const myspace = r.body.error.details.find((d: any) => d.field === "social_links.myspace");
    expect(myspace.reason).toContain("twitter, x, linkedin, github, instagram, facebook, youtube, tiktok, mastodon, bluesky, web");
    for (const good of ["0", "12px", "1.5em", "2rem", "100%"]) expect((await call("PUT", "/brand", { button_radius: good })).status).toBe(200);
  });

  test("footer_html: scripts, handlers, <style>, external CSS are refused with details, not stripped", async () => {
    const { call } = await owner();
    const bad = [
      ['<p>Hi<script>alert(1)</script></p>', "<script>"],
      ['<p onclick="steal()">Hi</p>', "event handler"],
      ["<style>p{color:red}</style><p>Hi</p>", "<style>"],
      ['<link rel="stylesheet" href="https://evil.example/x.css">', "<link>"],
      ['<p style="background:url(https://evil.example/t.png)">Hi</p>', "external"],
      ['<a href="javascript:alert(1)">x</a>', "javascript"],
      ['<img src=x onerror="alert(1)">', "onerror"],
      ["<iframe src=\"https://evil.example\"></iframe>", "<iframe>"],
    ];
    for (const [html, word] of bad) {
      const r = await call("PUT", "/brand", { footer_html: html });
      expect(r.status).toBe(400);
      expect(r.body.error.details.some((d: any) => d.field === "footer_html" && d.reason.includes(word!))).toBe(true);
    }
    const many = await call("PUT", "/brand", { footer_html: '<p onclick="x()">a<script>b</script><style>c</style></p>' });
    expect(many.body.error.details.filter((d: any) => d.field === "footer_html").length).toBe(3);
    const ok = await call("PUT", "/brand", { footer_html: '<p style="color:#999999">Acme Inc. <a href="https://acme.example/unsubscribe">Unsubscribe</a></p>' });
    expect(ok.status).toBe(200);
    expect(ok.body.raw.footer_html).toContain("Unsubscribe");
  });

  test("another workspace's brand is 404; a member without mail.brand.write is refused", async () => {
    const a = await owner();
    const b = await owner();
    const r = await app.call("GET", `${base(b.ws.id)}/brand`, { token: a.token });
    expect(r.status).toBe(404);
    const w = await app.call("PUT", `${base(b.ws.id)}/brand`, { token: a.token, body: {} });
    expect(w.status).toBe(404);
  });
});

describe("templates", () => {
  test("name boundaries: 64 characters ok, 65 refused; bad characters refused", async () => {
    const { call } = await owner();
    expect((await call("POST", "/templates", { name: "a".repeat(64), subject: "s", body_html: "<p>x</p>" })).status).toBe(201);
    for (const bad of ["a".repeat(65), "", "Welcome", "a b", "a.b", "é"]) {
      const r = await call("POST", "/templates", { name: bad, subject: "s", body_html: "<p>x</p>" });
      expect(r.status).toBe(400);
      expect(r.body.error.details[0].field).toBe("name");
    }
  });

  test("upsert on name, 201 both times; kind immutable (409); body_text derived when omitted", async () => {
    const { call, ws } = await owner();
    const a = await tpl(call, { name: "welcome", body_html: '<p>Hi {{name}}, <a href="https://acme.example/start">start here</a></p>', tags: ["onboarding"] });
    expect(a).toMatchObject({ workspace_id: ws.id, name: "welcome", kind: "template", subject: "Hello", tags: ["onboarding"], variables_schema: null });
    expect(a.body_text).toContain("https://acme.example/start");
    const b = await call("POST", "/templates", { name: "welcome", subject: "Hello again", body_html: "<p>v2</p>" });
    expect(b.status).toBe(201);
    expect(b.body.id).toBe(a.id);
    expect(b.body.tags).toEqual([]);
    expect(b.body.created_at).toBe(a.created_at);
    const c = await call("POST", "/templates", { name: "welcome", kind: "layout", subject: "", body_html: "<div>{{> @partial-block}}</div>" });
    expect(c.status).toBe(409);
    expect(c.body.error.code).toBe("TEMPLATE_KIND_IMMUTABLE");
    const g = await call("GET", "/templates/welcome");
    expect(g.status).toBe(200);
    expect(g.body.subject).toBe("Hello again");
    expect((await call("GET", "/templates/nope")).status).toBe(404);
    expect((await call("DELETE", "/templates/welcome")).status).toBe(204);
    expect((await call("GET", "/templates/welcome")).status).toBe(404);
    expect((await call("DELETE", "/templates/welcome")).status).toBe(404);
  });

  test("derived body_text says so and keeps the template's expressions as written (headings are not upper-cased)", async () => {
    const { call } = await owner();
    const derived = await tpl(call, { name: "heading", body_html: "<h1>Hi {{user.name}}</h1><p>Welcome.</p>" });
    expect(derived.body_text_derived).toBe(true);
    expect(derived.body_text).toContain("Hi {{user.name}}");
    const rendered = await call("POST", "/templates/heading/render", { data: { user: { name: "Ada" } } });
    expect(rendered.body.text).toContain("Hi Ada");
    const pinned = await tpl(call, { name: "pinned", body_html: "<h1>Hi</h1>", body_text: "Hi there" });
    expect(pinned).toMatchObject({ body_text: "Hi there", body_text_derived: false });
  });

  test("list: name ascending, filters, limit default 20 and clamp to 100, cursor", async () => {
    const { call } = await owner();
    for (let i = 0; i < 105; i++) await tpl(call, { name: `t-${String(i).padStart(3, "0")}`, body_html: "<p>x</p>", tags: i % 2 ? ["odd"] : ["even", "all"] });
    await tpl(call, { name: "a_layout", kind: "layout", body_html: "<div>{{> @partial-block}}</div>" });
    await tpl(call, { name: "z_part", kind: "partial", body_html: "<b>p</b>", tags: ["odd"] });
    const first = await call("GET", "/templates");
    expect(first.status).toBe(200);
    expect(first.body.data.length).toBe(20);
    expect(first.body.data[0]).toMatchObject({ name: "a_layout", source: "manual", source_ref: null, source_synced_at: null });
    expect(first.body.pagination.has_more).toBe(true);
    const big = await call("GET", "/templates?limit=1000");
    expect(big.body.data.length).toBe(100);
    const hundred = await call("GET", "/templates?limit=100");
    expect(hundred.body.data.length).toBe(100);
    const rest = await call("GET", `/templates?limit=100&cursor=${big.body.pagination.next_cursor}`);
    expect(rest.body.data.length).toBe(7);
    expect(rest.body.pagination).toEqual({ has_more: false, next_cursor: null });
    const names = [...big.body.data, ...rest.body.data].map((t: any) => t.name);
    expect(names).toEqual([...names].sort());
    expect((await call("GET", "/templates?limit=0")).status).toBe(400);
    expect((await call("GET", "/templates?limit=abc")).status).toBe(400);
    expect((await call("GET", "/templates?kind=layout")).body.data.map((t: any) => t.name)).toEqual(["a_layout"]);
    expect((await call("GET", "/templates?kind=bogus&limit=1")).body.data[0].name).toBe("a_layout");
    expect((await call("GET", "/templates?tags=odd&kind=partial")).body.data.map((t: any) => t.name)).toEqual(["z_part"]);
    expect((await call("GET", "/templates?tags=nope,all&limit=100")).body.data.length).toBe(53);
    expect((await call("GET", "/templates?search=T-10")).body.data.map((t: any) => t.name)).toEqual(["t-100", "t-101", "t-102", "t-103", "t-104"]);
    expect((await call("GET", "/templates?search=_")).body.data.map((t: any) => t.name)).toEqual(["a_layout", "z_part"]);
    expect((await call("GET", "/templates/tags")).body).toEqual({ data: ["all", "even", "odd"] });
  });

  test("another workspace: 404 for its templates, lists stay separate", async () => {
    const a = await owner();
    const b = await owner();
    await tpl(b.call, { name: "secret", body_html: "<p>x</p>" });
    expect((await app.call("GET", `${base(b.ws.id)}/templates/secret`, { token: a.token })).status).toBe(404);
    expect((await app.call("GET", `${base(b.ws.id)}/templates`, { token: a.token })).status).toBe(404);
    expect((await a.call("GET", "/templates/secret")).status).toBe(404);
    expect((await a.call("GET", "/templates")).body.data).toEqual([]);
    expect((await a.call("POST", "/templates/secret/render", { data: {} })).status).toBe(404);
  });
});

describe("rendering", () => {
  test("layouts, partials, brand tokens and footer; escaping on; CSS inlined", async () => {
    const { call } = await owner();
    await call("PUT", "/brand", { primary_color: "#AA0000", extras: { tagline: "Ship it" }, footer_address: "1 Main St", social_links: { github: "https://github.com/acme" } });
    await tpl(call, { name: "main", kind: "layout", body_html: "<style>.btn { color: {{brand.primary_color}} }</style><div class=\"wrap\">{{> @partial-block}}</div>{{> bp.footer}}" });
    await tpl(call, { name: "greet", kind: "partial", body_html: "<h1>Hi {{user.name}}</h1>" });
    await tpl(call, { name: "welcome", subject: "Welcome {{user.name}}", body_html: '{{#> layout.main}}{{> partial.greet}}<a class="btn" href="{{url}}">Go</a> {{brand.extras.tagline}}{{/layout.main}}' });
    const r = await call("POST", "/templates/welcome/render", { data: { user: { name: "<Ada>" }, url: "https://acme.example/go" } });
    expect(r.status).toBe(200);
    expect(r.body.subject).toBe("Welcome <Ada>");
    expect(r.body.html).toContain("Hi &lt;Ada&gt;");
    expect(r.body.html).toMatch(/<a class="btn" href="https:\/\/acme.example\/go" style="color: ?#AA0000;?">/);
    expect(r.body.html).not.toContain("<style>");
    expect(r.body.html).toContain("Ship it");
    expect(r.body.html).toContain("1 Main St");
    expect(r.body.html).toContain("https://github.com/acme");
    expect(r.body.text).toContain("Go [https://acme.example/go]");
    expect((await call("POST", "/templates/welcome/render", {})).status).toBe(400);
    const proto = await call("POST", "/templates/preview", { body_html: "{{constructor.name}}|{{__proto__}}|{{user.constructor}}", data: { user: {} } });
    expect(proto.status).toBe(200);
    expect(proto.body.html).not.toContain("Object");
  });

  test("recursion is 400 TEMPLATE_RECURSION, directly or through partials", async () => {
    const { call } = await owner();
    const self = await call("POST", "/templates", { name: "loop", kind: "partial", subject: "", body_html: "x{{> partial.loop}}" });
    expect(self.status).toBe(400);
    expect(self.body.error.code).toBe("TEMPLATE_RECURSION");
    await tpl(call, { name: "a", kind: "partial", body_html: "a{{> partial.b}}" });
    await tpl(call, { name: "b", kind: "partial", body_html: "b{{> partial.c}}" });
    const closing = await call("POST", "/templates", { name: "c", kind: "partial", subject: "", body_html: "c{{> partial.a}}" });
    expect(closing.status).toBe(400);
    expect(closing.body.error.code).toBe("TEMPLATE_RECURSION");
    expect(closing.body.error.message).toContain("partial.c -> partial.a -> partial.b -> partial.c");
    const draft = await call("POST", "/templates/preview", { body_html: "{{> partial.a}}" });
    expect(draft.status).toBe(400);
    expect(draft.body.error.code).toBe("TEMPLATE_PARTIAL_NOT_FOUND");
    await tpl(call, { name: "c", kind: "partial", body_html: "c" });
    const abc = await call("POST", "/templates/preview", { body_html: "{{> partial.a}}" });
    expect(abc.body).toEqual({ subject: "", html: "abc", text: "abc" });
    const dyn = await call("POST", "/templates/preview", { body_html: "{{> (lookup this 'p')}}" });
    expect(dyn.status).toBe(400);
    const syntax = await call("POST", "/templates", { name: "broken", subject: "s", body_html: "{{#if x}}" });
    expect(syntax.status).toBe(400);
    expect(syntax.body.error.code).toBe("TEMPLATE_SYNTAX_ERROR");
  });

  test("variables_schema: invalid schema and invalid data give one detail per problem; defaults apply", async () => {
    const { call } = await owner();
    const badSchema = await call("POST", "/templates", {
      name: "s1",
      subject: "s",
      body_html: "x",
      variables_schema: { version: 2, vars: { n: { type: "float" }, m: { type: "string", required: "yes" }, k: { type: "integer", default: "1" } } },
    });
    expect(badSchema.status).toBe(400);
    expect(badSchema.body.error.details.map((d: any) => d.field).sort()).toEqual(
      ["variables_schema.version", "variables_schema.vars.n.type", "variables_schema.vars.m.required", "variables_schema.vars.k.default"].sort(),
    );
    await tpl(call, {
      name: "order",
      subject: "Order {{order.id}}",
      body_html: "<p>{{name}} {{plan}} {{count}} {{order.id}}</p>",
      variables_schema: {
        version: 1,
        vars: {
          name: { type: "string", required: true },
          plan: { type: "string", options: ["free", "pro"], default: "free" },
          count: { type: "integer", required: true },
          email: { type: "email" },
          "order.id": { type: "string", required: true },
        },
      },
    });
    const r = await call("POST", "/templates/order/render", { data: { count: 1.5, plan: "gold", email: "nope" } });
    expect(r.status).toBe(400);
    expect(r.body.error.details).toEqual([
      { field: "data.name", reason: "required" },
      { field: "data.plan", reason: 'must be one of "free", "pro"' },
      { field: "data.count", reason: "must be an integer" },
      { field: "data.email", reason: "must be an email address" },
      { field: "data.order.id", reason: "required" },
    ]);
    const ok = await call("POST", "/templates/order/render", { data: { name: "Ada", count: 2, order: { id: "A1" } } });
    expect(ok.status).toBe(200);
    expect(ok.body.html).toContain("Ada free 2 A1");
    expect(ok.body.subject).toBe("Order A1");
  });

  test("/variables: AST paths, first-occurrence order, helpers and partials excluded", async () => {
    const { call } = await owner();
    await tpl(call, { name: "sig", kind: "partial", body_html: "{{sender.name}}" });
    await tpl(call, {
      name: "v",
      subject: "{{greeting}} {{user.first_name}}",
      body_html: "{{#if user.vip}}VIP {{user.first_name}}{{/if}}{{#each items}}{{name}} {{@index}} {{this}}{{/each}}{{> partial.sig}}{{brand.primary_color}}{{lookup map key}}{{> bp.footer}}{{{raw_html}}}",
    });
    const r = await call("GET", "/templates/v/variables");
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual(["greeting", "user.first_name", "user.vip", "items", "items.name", "sender.name", "map", "key", "raw_html"]);
  });

  inProcess("calls renderForSend (the service function) on the in-process app's database")("renderForSend: placeholders for missing variables, schema enforced with missing=error", async () => {
    const { call, ws } = await owner();
    await tpl(call, {
      name: "notice",
      subject: "Hi {{user.name}}",
      body_html: "<p>Code {{code}} for {{user.name}}</p>",
      variables_schema: { version: 1, vars: { code: { type: "string", required: true } } },
    });
    const p = await renderForSend(app.ctx.db, ws.id, "notice", {}, { missing: "placeholder" });
    expect(p.subject).toBe("Hi [user.name]");
    expect(p.html).toContain("Code [code] for [user.name]");
    expect(p.text).toContain("Code [code]");
    expect(p.template_name).toBe("notice");
    await expect(renderForSend(app.ctx.db, ws.id, "notice", {}, { missing: "error" })).rejects.toMatchObject({ status: 400, details: [{ field: "data.code", reason: "required" }] });
    const ok = await renderForSend(app.ctx.db, ws.id, "notice", { code: "X1", user: { name: "Ada" } }, { missing: "error" });
    expect(ok.html).toContain("Code X1 for Ada");
    await expect(renderForSend(app.ctx.db, ws.id, "missing", {}, { missing: "error" })).rejects.toMatchObject({ status: 404 });
    const other = await owner();
    await expect(renderForSend(app.ctx.db, other.ws.id, "notice", {}, { missing: "error" })).rejects.toMatchObject({ status: 404 });
  });
});

describe("lint", () => {
  const ids = (r: any) => r.body.findings.map((f: any) => f.id);

  test("a clean message scores high", async () => {
    const { call } = await owner();
    const r = await call("POST", "/templates/lint", {
      subject: "Your receipt for October",
      body_html: '<p>Thanks for your order. Your receipt is ready and your plan renews next month.</p><p><a href="https://acme.example/receipt">View receipt</a></p>',
      body_text: "Thanks for your order. View receipt: https://acme.example/receipt",
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ score: 100, findings: [] });
  });

  test("known-bad template: findings with errors first and a low score", async () => {
    const { call } = await owner();
    const r = await call("POST", "/templates/lint", {
      subject: "FREE MONEY NOW!!!",
      body_html:
        '<div><img src="http://cdn.example/big.png"><a href="https://evil.example/login">https://paypal.com/login</a> <a href="https://bit.ly/x">deal</a>' +
        '<a href="javascript:alert(1)">x</a><script>1</script><form action="https://e.example"></form><iframe src="https://e.example"></iframe><p>Limited time sale',
    });
    expect(r.status).toBe(200);
    const got = ids(r);
    for (const id of [
      "script_tag", "javascript_url", "form_tag", "iframe_tag", "link_text_mismatch", "image_only",
      "missing_unsubscribe", "url_shortener", "subject_all_caps", "subject_spammy_punctuation", "unbalanced_tags", "img_missing_alt", "insecure_link", "missing_text_part",
    ]) expect(got).toContain(id);
    const sev = r.body.findings.map((f: any) => f.severity);
    expect(sev).toEqual([...sev].sort((a: string, b: string) => ["error", "warning", "info"].indexOf(a) - ["error", "warning", "info"].indexOf(b)));
    expect(r.body.score).toBe(0);
    for (const f of r.body.findings) expect(f.suggestion.length).toBeGreaterThan(0);
  });

  test("subject empty and too long; HTML over 102 KB (boundary)", async () => {
    const { call } = await owner();
    expect(ids(await call("POST", "/templates/lint", { subject: "", body_html: "<p>hello there friend</p>", body_text: "hello" }))).toEqual(["subject_empty"]);
    expect(ids(await call("POST", "/templates/lint", { subject: "a".repeat(71), body_html: "<p>hello there friend</p>", body_text: "hello" }))).toEqual(["subject_too_long"]);
    expect(ids(await call("POST", "/templates/lint", { subject: "a".repeat(70), body_html: "<p>hello there friend</p>", body_text: "hello" }))).toEqual([]);
    const html = (n: number) => `<p>${"a".repeat(n - 7)}</p>`;
    expect(ids(await call("POST", "/templates/lint", { subject: "Report", body_html: html(102 * 1024), body_text: "x" }))).toEqual([]);
    expect(ids(await call("POST", "/templates/lint", { subject: "Report", body_html: html(102 * 1024 + 1), body_text: "x" }))).toEqual(["html_too_large"]);
  });
});
