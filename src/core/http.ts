/**
 * The HTTP kernel every service sits behind: request ids, the one error body,
 * access logs and request metrics. Mounted once at the root of the app.
 */
import { Elysia } from "elysia";
import { ApiError, errorBody, invalidField } from "./errors";
import type { Logger } from "./log";
import type { Metrics } from "./metrics";
import { RequestBodies } from "./request-body";

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

/** Turns Elysia's TypeBox validation error into our details list. */
function validationDetails(error: any): { field: string; reason: string }[] {
  const all: any[] = Array.isArray(error?.all) ? error.all : [];
  const seen = new Set<string>();
  const details: { field: string; reason: string }[] = [];
  for (const e of all) {
    const field = String(e.path ?? "").replace(/^\//, "").replaceAll("/", ".") || String(error?.type ?? "body");
    if (seen.has(field)) continue;
    seen.add(field);
    details.push({ field, reason: e.summary ?? e.message ?? "invalid" });
  }
  return details;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

export function httpKernel(log: Logger, metrics: Metrics, bodies = new RequestBodies()) {
  // Start times per request (Elysia's `store` is app-wide, so not there).
  const started = new WeakMap<Request, number>();
  return new Elysia({ name: "http-kernel" })
    .error({ ApiError })
    // Every body goes through one reader: media type, size cap, JSON depth (request-body.ts).
    // Destructured, not `(ctx) => bodies.parse(ctx)`: Elysia infers from the source of hooks
    // which request parts to prepare on every route of the app, and a context handed whole
    // to a function counts as reading all (headers copied, cookies and query parsed, /healthz too).
    .onParse({ as: "global" }, ({ request, path }) => bodies.parse(request, path))
    // The router leaves a path parameter that is not percent-encoded UTF-8 (%FF) as null,
    // which no handler expects: refuse it before validation and handlers see it.
    .onTransform({ as: "global" }, ({ params }) => {
      for (const name in params) if (params[name] === null) throw invalidField(name, "not valid percent-encoded UTF-8");
    })
    .onRequest(({ request, set }) => {
      const incoming = request.headers.get("x-request-id");
      const id = incoming && REQUEST_ID_RE.test(incoming) ? incoming : crypto.randomUUID();
      set.headers["x-request-id"] = id;
      started.set(request, performance.now());
    })
    .onError({ as: "global" }, ({ code, error: raised, set, request }) => {
      // Elysia wraps whatever a parse hook throws (our 400/413/415 included) in a ParseError.
      const error = code === "PARSE" && (raised as any).cause instanceof ApiError ? (raised as any).cause : raised;
      const rid = String(set.headers["x-request-id"] ?? "");
      const base = { "x-request-id": rid };
      if (error instanceof ApiError) {
        set.status = error.status;
        return json(error.status, error.toBody(), { ...base, ...(error.headers ?? {}) });
      }
      set.status = code === "NOT_FOUND" ? 404 : code === "VALIDATION" || code === "PARSE" ? 400 : 500;
      switch (code) {
        case "VALIDATION":
          return json(400, errorBody("VALIDATION_ERROR", "Request validation failed", validationDetails(error)), base);
        case "PARSE":
          return json(400, errorBody("INVALID_BODY", "Request body could not be parsed"), base);
        case "NOT_FOUND":
          return json(404, errorBody("NOT_FOUND", "No such route"), base);
        case "INVALID_COOKIE_SIGNATURE":
          return json(400, errorBody("INVALID_COOKIE", "Cookie is invalid"), base);
      }
      // Elysia wraps some client errors (e.g. unsupported content type) with a status.
      const status = (error as any)?.status;
      if (typeof status === "number" && status >= 400 && status < 500) {
        return json(status, errorBody(status === 415 ? "UNSUPPORTED_MEDIA_TYPE" : "BAD_REQUEST", String((error as any)?.message ?? "Bad request")), base);
      }
      log.error("unhandled error", { request_id: rid, method: request.method, url: request.url, err: String((error as any)?.stack ?? error) });
      return json(500, errorBody("INTERNAL_ERROR", "Internal server error"), base);
    })
    .onAfterResponse({ as: "global" }, ({ request, set, route, responseValue }) => {
      const t0 = started.get(request);
      const secs = t0 ? (performance.now() - t0) / 1000 : 0;
      // A returned Response (redirects, pages, mapped errors) carries its own status;
      // set.status only holds what a handler set, so a 302 would otherwise count as 200.
      const status = responseValue instanceof Response ? responseValue.status : typeof set.status === "number" ? set.status : 200;
      const template = route || "unmatched";
      metrics.observeRequest(request.method, template, status, secs);
      // The access log: one line per request, route template rather than path (no ids or tokens).
      log.info("request", { request_id: set.headers["x-request-id"], method: request.method, route: template, status, ms: Math.round(secs * 10000) / 10 });
    });
}
