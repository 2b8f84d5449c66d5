/**
 * The API description routes: /docs/json (whole instance), /<service>/openapi.json, and
 * Swagger UI at /docs served from the binary (no CDN: the page works with no internet).
 *
 * The guides (README.md and docs/*.md) are served beside it, at /docs/guides (core/guides.ts).
 *
 * The UI's files come from the pinned swagger-ui-dist package, imported `with { type: "file" }`
 * so `bun build --compile` embeds them; at run time they are read with Bun.file (from
 * node_modules in development, from the executable once compiled).
 */
import { Elysia } from "elysia";
import bundleJs from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import presetJs from "swagger-ui-dist/swagger-ui-standalone-preset.js" with { type: "file" };
import uiCss from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import favicon from "swagger-ui-dist/favicon-32x32.png" with { type: "file" };
import { notFound } from "./errors";
import { GUIDES_CSP, GUIDES_CSS, GUIDES_PATH, guidePages } from "./guides";
import { buildOpenApiDocuments, type OpenApiOptions, type RouteInfo } from "./openapi";

const JS = "text/javascript; charset=utf-8";
/** Path under /docs -> embedded file and its content type. */
const ASSETS: Record<string, { file: string; type: string }> = {
  "swagger-ui-bundle.js": { file: bundleJs, type: JS },
  "swagger-ui-standalone-preset.js": { file: presetJs, type: JS },
  "swagger-ui.css": { file: uiCss, type: "text/css; charset=utf-8" },
  "favicon.png": { file: favicon, type: "image/png" },
};

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string) {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(title)}</title>
  <link rel="icon" type="image/png" href="/docs/favicon.png">
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="stylesheet" href="/docs/guides.css">
</head>
<body>
  <nav class="top"><a href="${GUIDES_PATH}">Guides</a> <a href="${GUIDES_PATH}/start">Ten minutes with Bunker</a> <a href="/admin/">Console</a></nav>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/swagger-ui-standalone-preset.js"></script>
  <script src="/docs/swagger-initializer.js"></script>
</body>
</html>
`;
}

/** The UI settings: one entry per document in the top bar; no online validator badge (it would call out). */
function initializer(urls: { url: string; name: string }[]) {
  return `window.onload = function () {
  window.ui = SwaggerUIBundle({
    urls: ${JSON.stringify(urls)},
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: "StandaloneLayout"
  });
};
`;
}

function guide(name: string): Response {
  const html = guidePages().get(name);
  if (html === undefined) throw notFound("Guide");
  return new Response(html, {
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": GUIDES_CSP,
      "x-content-type-options": "nosniff",
      "x-frame-options": "DENY",
      "referrer-policy": "no-referrer",
      "cache-control": "no-cache",
    },
  });
}

/**
 * Mount after every other route: the documents describe `routes()` as they are on the first
 * request for one of them, and are kept from then on.
 */
export function apiDocs(routes: () => readonly RouteInfo[], opts: OpenApiOptions) {
  // Serialized once too: each answer is then a copy of a string.
  let built: { full: string; services: Map<string, string> } | null = null;
  const documents = () => {
    if (built) return built;
    const docs = buildOpenApiDocuments(routes(), opts);
    return (built = { full: JSON.stringify(docs.full), services: new Map([...docs.services].map(([prefix, doc]) => [prefix, JSON.stringify(doc)])) });
  };
  const json = (text: string | undefined) => new Response(text, { headers: { "content-type": "application/json; charset=utf-8" } });
  const hide = { detail: { hide: true } };

  const urls = [{ url: "/docs/json", name: opts.info.title }, ...opts.services.map((s) => ({ url: `${s.prefix}/openapi.json`, name: s.title }))];
  const html = page(opts.info.title);
  const init = initializer(urls);

  const app = new Elysia({ name: "api-docs" })
    .get("/docs", () => new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } }), hide)
    .get("/docs/swagger-initializer.js", () => new Response(init, { headers: { "content-type": JS } }), hide)
    .get("/docs/json", () => json(documents().full), hide)
    .get("/docs/guides.css", () => new Response(GUIDES_CSS, { headers: { "content-type": "text/css; charset=utf-8", "cache-control": "no-cache" } }), hide)
    // The guides: GUIDES_PATH is the index (docs/README.md), GUIDES_PATH/<name> each guide.
    .get(GUIDES_PATH, () => guide(""), hide)
    .get(`${GUIDES_PATH}/:name`, ({ params }) => guide(params.name), hide)
    .get("/docs/:asset", ({ params }) => {
      const asset = Object.hasOwn(ASSETS, params.asset) ? ASSETS[params.asset] : null;
      if (!asset) throw notFound("Documentation asset");
      return new Response(Bun.file(asset.file), { headers: { "content-type": asset.type, "cache-control": "public, max-age=3600" } });
    }, hide);
  for (const s of opts.services) app.get(`${s.prefix}/openapi.json`, () => json(documents().services.get(s.prefix)), hide);
  return app;
}
