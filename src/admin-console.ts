/**
 * The admin console at /admin/: a static page and its two assets, built from console/ by
 * scripts/build-console.ts into static/admin/ (committed; test/console/bundle.test.ts
 * checks they match the source). Imported as text, so `bun build --compile` embeds them.
 *
 * Every answer carries a strict Content-Security-Policy (scripts and connections to this
 * origin only, no inline script, no framing) and X-Frame-Options: DENY. Inline styles are
 * allowed for the mail previews, which render in sandboxed srcdoc iframes (they inherit
 * this policy); remote images stay blocked there.
 */
import { Elysia } from "elysia";
import html from "../static/admin/index.html" with { type: "text" };
import js from "../static/admin/app.js" with { type: "text" };
import css from "../static/admin/app.css" with { type: "text" };
import { notFound } from "./core/errors";
import { lazy } from "./core/lazy";

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "frame-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

interface Asset {
  body: Uint8Array<ArrayBuffer>;
  gzip: Uint8Array<ArrayBuffer>;
  type: string;
  etag: string;
}

function asset(text: string, type: string): Asset {
  const body = new TextEncoder().encode(text);
  return { body, gzip: Bun.gzipSync(body, { level: 9 }) as Uint8Array<ArrayBuffer>, type, etag: `"${Bun.hash(body).toString(36)}"` };
}

/**
 * Encoded and compressed on the first request for the console, not at import: gzip at level 9
 * was a visible part of every start (and of every CLI command), and a node serving only the
 * API never pays it nor keeps the copies.
 */
const assets = lazy(() => ({
  /** Request path segment -> asset; the page itself is /admin/. */
  files: {
    "app.js": asset(js as unknown as string, "text/javascript; charset=utf-8"),
    "app.css": asset(css as unknown as string, "text/css; charset=utf-8"),
  } as Record<string, Asset>,
  page: asset(html as unknown as string, "text/html; charset=utf-8"),
}));

function serve(request: Request, a: Asset, cache: string): Response {
  const headers: Record<string, string> = {
    "content-type": a.type,
    "content-security-policy": CONSOLE_CSP,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": cache,
    etag: a.etag,
    vary: "accept-encoding",
  };
  if (request.headers.get("if-none-match") === a.etag) return new Response(null, { status: 304, headers });
  if (/\bgzip\b/.test(request.headers.get("accept-encoding") ?? "")) {
    return new Response(a.gzip, { headers: { ...headers, "content-encoding": "gzip" } });
  }
  return new Response(a.body, { headers });
}

export function adminConsole() {
  const hide = { detail: { hide: true } };
  return (
    new Elysia({ name: "admin-console" })
      // Elysia matches "/admin" and "/admin/" as one route (non-strict paths), so a separate
      // "/admin" redirect would also answer "/admin/" and loop: one handler decides by path.
      .get("/admin/", ({ request, redirect }) => (new URL(request.url).pathname === "/admin" ? redirect("/admin/", 302) : serve(request, assets().page, "no-cache")), hide)
      // Revalidated on every load (ETag): a new binary's console is picked up at once.
      .get("/admin/assets/:file", ({ request, params }) => {
        const files = assets().files;
        const a = Object.hasOwn(files, params.file) ? files[params.file] : undefined;
        if (!a) throw notFound("Console asset");
        return serve(request, a, "no-cache");
      }, hide)
  );
}
