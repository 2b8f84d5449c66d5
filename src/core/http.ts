/**
 * The HTTP kernel every service sits behind: request ids, the one error body,
 * access logs and request metrics. Mounted once at the root of the app.
 */
import { Elysia } from "elysia";
import { ApiError, errorBody, invalidField } from "./errors";
import type { Logger } from "./log";
import type { Metrics } from "./metrics";
import type { CredentialGate, RouteSecurity } from "./credential-gate";
import { ClientAddresses, type AddressSource } from "./client-address";
import { ClientAdmission } from "./client-admission";
import { CLOSE, RequestBodies } from "./request-body";
// Installs the date-time fast path before any schema is compiled.
import "./formats";

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
    // A missing required field reads "required" rather than TypeBox's "Expected ... but found: undefined".
    details.push({ field, reason: e.value === undefined && all.length ? "required" : (e.summary ?? e.message ?? "invalid") });
  }
  return details;
}

/** The error responses; the x-request-id header is added with every other response's, by the kernel's wrapper. */
const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

/**
 * What the kernel keeps of a request while it is handled, on the Request itself (a symbol
 * property: cheaper than a WeakMap, and gone with the request).
 */
const STATE = Symbol("bunker.request");
interface RequestState {
  id: string;
  /** Route template (`/auth/:app_slug/v1/me`), recorded by a hook once Elysia has matched one. */
  route: string | undefined;
  /** What the matched route declares (credential-gate.ts), once the transform hook has run. */
  security?: RouteSecurity;
  /** The client's address (client-address.ts): undefined until first asked for. */
  address?: string | null;
  /** Its place among the client's requests in progress (client-admission.ts). */
  held?: string | null;
  /** The kernel's client rules, for clientAddressOf. */
  clients: ClientLimits;
  /** The error the kernel's onError turned into the response, if one did (for prefix hooks' after()). */
  failure?: HandledError;
}

/** An error as Elysia handed it to the kernel's onError: its code (VALIDATION, NOT_FOUND, PARSE ...) and the error. */
export interface HandledError {
  code: unknown;
  error: unknown;
}

/**
 * A module's work on the requests under its own path prefix, done by the kernel's wrapper
 * around the app's handler (ServiceModule.requestHooks). Not an Elysia onRequest or global
 * mapResponse: those run for every request of the app, and Elysia compiles every route as
 * async (with a URL parse) once any exists. Here a request outside every prefix pays one
 * string comparison per hook.
 */
export interface PrefixHook<S = unknown> {
  /** A path: the hook sees requests to it and below it ("/tack/api" and "/tack/api/..."; not "/tack/apix"). */
  prefix: string;
  /**
   * Before the app handles the request (before its body is read and its route is matched):
   * a Response answers the request (the app and after() are skipped); anything else is the
   * state handed to after().
   */
  before?(request: Request): S | Response | Promise<S | Response>;
  /** Every response to a request before() let through: matched route or not, errors included. */
  after?(request: Request, response: Response, state: S): Response | Promise<Response>;
}

/** Who the kernel counts requests in progress against, and how many each may have. */
export interface ClientLimits {
  addresses: ClientAddresses;
  /** The listening server (null in-process: no client addresses there). */
  server: () => AddressSource | null | undefined;
  /** Requests in progress per client address; 0 switches the cap off. */
  maxInProgress: number;
}

const NO_CLIENT_LIMITS: ClientLimits = { addresses: new ClientAddresses(), server: () => null, maxInProgress: 0 };

/**
 * The client address of a request, from the socket (or a trusted proxy's X-Forwarded-For);
 * null in-process or outside the kernel. Computed once per request.
 */
export function clientAddressOf(request: Request): string | null {
  const state = (request as { [STATE]?: RequestState })[STATE];
  if (!state) return null;
  if (state.address === undefined) state.address = state.clients.addresses.of(request, state.clients.server());
  return state.address;
}

/** The request id the kernel gave a request (the caller's x-request-id when well-formed); "" outside the kernel. */
export function requestIdOf(request: Request): string {
  return (request as { [STATE]?: RequestState })[STATE]?.id ?? "";
}

/** The route template the request matched (undefined before Elysia matched one, or for no route). */
export function routeOf(request: Request): string | undefined {
  return (request as { [STATE]?: RequestState })[STATE]?.route;
}

/** The error the kernel's onError answered the request with, if any. */
export function handledErrorOf(request: Request): HandledError | undefined {
  return (request as { [STATE]?: RequestState })[STATE]?.failure;
}

/** The matched route's declared security (undefined before the transform hook or without a gate). */
export function routeSecurityOf(request: Request): RouteSecurity | undefined {
  return (request as { [STATE]?: RequestState })[STATE]?.security;
}

/** Where the path of a request URL starts (past the scheme and host). */
const pathStart = (url: string) => url.indexOf("/", url.indexOf("//") + 2);

/**
 * The path of a request URL. Elysia's own reading starts its search for the path at the 12th
 * character (past "http://x.xx"), so under a Host of one to three characters it cut the path
 * short, and a route's body rules missed it (an upload answered 415).
 */
function pathOf(url: string): string {
  const start = pathStart(url);
  if (start === -1) return "/";
  const query = url.indexOf("?", start);
  return query === -1 ? url.slice(start) : url.slice(start, query);
}

/** What Elysia's `wrap` hands the kernel: the app's (or one route's) request handler. */
type Handle = (request: Request) => Response | Promise<Response>;

/** The request is to `prefix` or below it: the path (from `start` in the URL) is the prefix, or goes on with "/" or a query. */
function underPrefix(url: string, start: number, prefix: string): boolean {
  if (!url.startsWith(prefix, start)) return false;
  const end = start + prefix.length;
  return end === url.length || url[end] === "/" || url[end] === "?";
}

/** The first hook from `from` on whose prefix holds the request; -1 for none. */
function nextHook(hooks: readonly PrefixHook[], from: number, url: string, start: number): number {
  for (let i = from; i < hooks.length; i++) if (underPrefix(url, start, hooks[i]!.prefix)) return i;
  return -1;
}

/** Hook `i` (which holds the request) and the later ones that do, around the app's handler: befores in list order, afters in reverse. */
async function aroundHooks(hooks: readonly PrefixHook[], i: number, start: number, handle: Handle, request: Request): Promise<Response> {
  const hook = hooks[i]!;
  const state = hook.before ? await hook.before(request) : undefined;
  if (state instanceof Response) return state;
  const next = nextHook(hooks, i + 1, request.url, start);
  const response = await (next < 0 ? handle(request) : aroundHooks(hooks, next, start, handle, request));
  return hook.after ? hook.after(request, response, state) : response;
}

/**
 * Elysia compiles a route as an async function whenever it has a parse hook, and the kernel's
 * body reader is a parse hook on every route; but Elysia never parses a GET or HEAD body
 * (compose: hasBody), so on those routes the hook only cost a promise and a microtask per
 * request. Dropped from them once every route is mounted and before any is compiled (a
 * listening server compiles each route at its first request).
 */
function dropUnusedParseHooks(routes: readonly { method: string; hooks?: Record<string, unknown> }[]) {
  for (const r of routes) if ((r.method === "GET" || r.method === "HEAD") && r.hooks?.parse) r.hooks.parse = undefined;
}

const recordRoute = (request: Request, route: string | undefined) => {
  const state = (request as { [STATE]?: RequestState })[STATE];
  if (state && route) state.route = route;
};

/**
 * `prefixHooks` is read at each request: the app fills it as it mounts its modules (after the
 * kernel is built).
 */
export function httpKernel(
  log: Logger,
  metrics: Metrics,
  bodies = new RequestBodies(),
  gate?: CredentialGate,
  clients: ClientLimits = NO_CLIENT_LIMITS,
  prefixHooks: readonly PrefixHook[] = [],
) {
  // The level is fixed for a logger's life: below info, no access-log fields are built at all.
  const accessLog = log.enabled("info");
  const admission = clients.maxInProgress > 0 ? new ClientAdmission(clients.maxInProgress, clientAddressOf) : null;
  // Closed rather than drained: the client is already holding too many connections.
  const tooManyInProgress = () =>
    json(429, errorBody("RATE_LIMITED", `At most ${clients.maxInProgress} requests from one address may be in progress at once`), { "retry-after": "1", ...CLOSE });
  /**
   * Request id, timing, access log and metrics in one wrapper around the whole app (Elysia's
   * `wrap`: app.handle in-process and every route of the listening server go through it),
   * rather than lifecycle hooks: the status is that of the Response actually returned
   * (a 302 is a 302), and no afterResponse hook costs a setImmediate per request.
   */
  const done = (response: Response, request: Request, state: RequestState, t0: number) => {
    metrics.requestsInFlight--;
    admission?.release(state);
    response.headers.set("x-request-id", state.id);
    const secs = (performance.now() - t0) / 1000;
    const route = state.route ?? "unmatched";
    metrics.observeRequest(request.method, route, response.status, secs);
    // The access log: one line per request, route template rather than path (no ids or tokens).
    if (accessLog) log.info("request", { request_id: state.id, method: request.method, route, status: response.status, ms: Math.round(secs * 10000) / 10 });
    return response;
  };
  /** A body the route left unread is drained (or the connection closed) before the answer goes. */
  const finish = (response: Response, request: Request, state: RequestState, t0: number): Response | Promise<Response> => {
    const settled = bodies.settle(request, response);
    return settled instanceof Promise ? settled.then((r) => done(r, request, state, t0)) : done(settled, request, state, t0);
  };
  const serve = (handle: Handle, request: Request) => {
    const t0 = performance.now();
    const incoming = request.headers.get("x-request-id");
    const state: RequestState = { id: incoming && REQUEST_ID_RE.test(incoming) ? incoming : crypto.randomUUID(), route: undefined, clients };
    (request as { [STATE]?: RequestState })[STATE] = state;
    metrics.requestsInFlight++;
    if (admission && !admission.admit(state, request)) return done(tooManyInProgress(), request, state, t0);
    let out: Response | Promise<Response>;
    try {
      const start = prefixHooks.length ? pathStart(request.url) : -1;
      const first = start < 0 ? -1 : nextHook(prefixHooks, 0, request.url, start);
      out = first < 0 ? handle(request) : aroundHooks(prefixHooks, first, start, handle, request);
    } catch (err) {
      metrics.requestsInFlight--;
      admission?.release(state);
      throw err;
    }
    if (!(out instanceof Promise)) return finish(out, request, state, t0);
    return out.then(
      (response) => finish(response, request, state, t0),
      (err) => {
        metrics.requestsInFlight--;
        admission?.release(state);
        throw err;
      },
    );
  };

  /** The credential gate, once per request (the parse hook runs only for requests with a body). */
  const guard = (request: Request, route: string | undefined) => {
    const state = (request as { [STATE]?: RequestState })[STATE];
    if (!gate || (state && state.security)) return;
    const security = gate.check(request, route);
    if (state) state.security = security;
  };

  return new Elysia({ name: "http-kernel" })
    .error({ ApiError })
    .wrap((handle) => (request: Request) => serve(handle as unknown as Handle, request))
    // Runs as the server starts listening, before it takes a request.
    .onStart(({ routes }) => dropUnusedParseHooks(routes))
    // Every body goes through one reader: media type, size cap, JSON depth (request-body.ts).
    // Destructured, not `(ctx) => bodies.parse(ctx)`: Elysia infers from the source of hooks
    // which request parts to prepare on every route of the app, and a context handed whole
    // to a function counts as reading all (headers copied, cookies and query parsed, /healthz too).
    // The credential gate first: a body is not judged for a caller who has not said who they are.
    .onParse({ as: "global" }, ({ request, route }) => {
      guard(request, route);
      return bodies.parse(request, pathOf(request.url));
    })
    // Runs on every matched route before validation and handlers: records the template for
    // the access log and metrics. The router leaves a path parameter that is not
    // percent-encoded UTF-8 (%FF) as null, which no handler expects: refused here.
    // Then the credential gate: a route that declares security answers 401 to a request that
    // carries none of its credentials, before anything judges the input (credential-gate.ts).
    .onTransform({ as: "global" }, ({ params, request, route }) => {
      recordRoute(request, route);
      guard(request, route);
      for (const name in params) if (params[name] === null) throw invalidField(name, "not valid percent-encoded UTF-8");
      // NUL (%00) in the path or query: PostgreSQL text cannot hold it, so neither engine sees one.
      if (request.url.includes("%00")) throw invalidField("url", "may not contain the NUL character (%00)");
    })
    .onError({ as: "global" }, ({ code, error: raised, set, request, route }) => {
      // Errors before the transform hook (a body refused by the parse hook) name the route too.
      recordRoute(request, route);
      const state = (request as { [STATE]?: RequestState })[STATE];
      if (state) state.failure = { code, error: raised };
      // Elysia wraps whatever a parse hook throws (our 400/413/415 included) in a ParseError.
      const error = code === "PARSE" && (raised as any).cause instanceof ApiError ? (raised as any).cause : raised;
      if (error instanceof ApiError) {
        set.status = error.status;
        return json(error.status, error.toBody(), error.headers);
      }
      set.status = code === "NOT_FOUND" ? 404 : code === "VALIDATION" || code === "PARSE" ? 400 : 500;
      switch (code) {
        case "VALIDATION":
          return json(400, errorBody("VALIDATION_ERROR", "Request validation failed", validationDetails(error)));
        case "PARSE":
          return json(400, errorBody("INVALID_BODY", "Request body could not be parsed"));
        case "NOT_FOUND":
          return json(404, errorBody("NOT_FOUND", "No such route"));
        case "INVALID_COOKIE_SIGNATURE":
          return json(400, errorBody("INVALID_COOKIE", "Cookie is invalid"));
      }
      // Elysia wraps some client errors (e.g. unsupported content type) with a status.
      const status = (error as any)?.status;
      if (typeof status === "number" && status >= 400 && status < 500) {
        return json(status, errorBody(status === 415 ? "UNSUPPORTED_MEDIA_TYPE" : "BAD_REQUEST", String((error as any)?.message ?? "Bad request")));
      }
      // The route template, not the URL: a URL may carry a signature or a token in its query.
      log.error("unhandled error", { request_id: requestIdOf(request), method: request.method, route: route || pathOf(request.url), err: String((error as any)?.stack ?? error) });
      return json(500, errorBody("INTERNAL_ERROR", "Internal server error"));
    });
}
