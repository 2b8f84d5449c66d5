/**
 * The console's only way to the server: the public REST API on this origin.
 *
 * Credentials: sign-in answers with tokens and sets the HttpOnly, SameSite=Lax
 * `auth_token` cookie. The tokens are kept in this module's memory only (never in
 * storage) and sent as `Authorization: Bearer`; the cookie keeps the platform routes
 * working after a reload. App-scoped Auth routes (/auth/<app>/v1/...) take only the
 * Authorization header (no cookie, so no CSRF), so after a reload their screens ask for
 * the password again (Reauth in modules/auth.tsx). Secrets the API shows once live only
 * in component state.
 */
import type { paths } from "./api-types";

export interface FieldDetail {
  field: string;
  reason: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: FieldDetail[] = [],
  ) {
    super(message);
  }
}

export interface Page<T> {
  data: T[];
  pagination?: { next_cursor: string | null; has_more: boolean };
}

/** Called on any 401 from a signed-in screen: the app shows the sign-in form again. */
let onUnauthorized: () => void = () => {};
export const setUnauthorizedHandler = (fn: () => void) => void (onUnauthorized = fn);

interface Tokens {
  access_token: string;
  refresh_token: string;
}
let tokens: Tokens | null = null;
export const setTokens = (t: Tokens | null) => void (tokens = t ? { access_token: t.access_token, refresh_token: t.refresh_token } : null);
export const hasBearer = () => tokens !== null;

/** One refresh at a time: concurrent 401s wait for the same rotation. */
let refreshing: Promise<boolean> | null = null;
function refresh(): Promise<boolean> {
  const current = tokens;
  if (!current) return Promise.resolve(false);
  refreshing ??= fetch("/platform/v1/auth/refresh", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ refresh_token: current.refresh_token }) })
    .then(async (r) => {
      if (!r.ok) return (tokens = null), false;
      setTokens((await r.json()) as Tokens);
      return true;
    })
    .catch(() => false)
    .finally(() => void (refreshing = null));
  return refreshing;
}

export async function request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, retried = false): Promise<Response> {
  const init: RequestInit = { method, credentials: "same-origin", headers: { accept: "application/json", ...(tokens ? { authorization: `Bearer ${tokens.access_token}` } : {}), ...headers } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)["content-type"] = "application/json";
  }
  const res = await fetch(path, init);
  if (res.status === 401 && tokens && !retried && !path.startsWith("/platform/v1/auth/")) {
    if (await refresh()) return request(method, path, body, headers, true);
  }
  if (!res.ok) {
    let err: { code?: string; message?: string; details?: FieldDetail[] } = {};
    try {
      err = ((await res.json()) as { error?: typeof err }).error ?? {};
    } catch {
      // not JSON: keep the status text
    }
    // A wrong password or MFA code is a 401 of its own form, not a lost session.
    if (res.status === 401 && !path.includes("/auth/signin") && !path.includes("/auth/setup") && !path.includes("/auth/mfa/")) onUnauthorized();
    throw new ApiError(res.status, err.code ?? `HTTP_${res.status}`, err.message ?? res.statusText ?? `HTTP ${res.status}`, err.details ?? []);
  }
  return res;
}

/** The JSON answer of a request made with `request` (null for 204 or an empty body). */
async function json(res: Response): Promise<unknown> {
  if (res.status === 204) return null;
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

// --- Typed by path and method, from the server's OpenAPI documents (api-types/) ------------

type Method = "get" | "post" | "put" | "patch" | "delete";
type Paths = paths;
/** The documented path templates that have an operation for `M`. */
export type PathOf<M extends Method> = { [P in keyof Paths]: Paths[P] extends Record<M, object> ? P : never }[keyof Paths];
/** The operation at a path and method. */
type Op<P extends keyof Paths, M extends Method> = Paths[P] extends Record<M, infer O> ? O : never;
type Parameters_<O> = O extends { parameters: infer X } ? X : object;
type PathParams<O> = Parameters_<O> extends { path: infer X } ? X : never;
type Query<O> = Parameters_<O> extends { query?: infer X } ? Exclude<X, undefined> : never;
type Body<O> = O extends { requestBody: { content: { "application/json": infer B } } } ? B : never;
type Success = 200 | 201 | 202 | 204;
/** The JSON answer of a success status (null for 204). */
type Answer<O> = O extends { responses: infer R } ? { [S in keyof R & Success]: R[S] extends { content: { "application/json": infer T } } ? T : null }[keyof R & Success] : never;

/** What a request carries beside its path: the template's parameters, the query, the JSON body. */
type Init<O> = ([PathParams<O>] extends [never] ? { path?: undefined } : { path: PathParams<O> }) &
  ([Query<O>] extends [never] ? { query?: undefined } : { query?: Query<O> }) &
  // A body whose every field is optional may be left out (the console sends none then).
  ([Body<O>] extends [never] ? { body?: undefined } : object extends Body<O> ? { body?: Body<O> } : { body: Body<O> });
type Args<O> = object extends Init<O> ? [init?: Init<O>] : [init: Init<O>];

/** The answer of `M` `P`. */
export type AnswerOf<M extends Method, P extends PathOf<M>> = Answer<Op<P, M>>;
/** The answer of GET `P` (for a screen's loader or a table's rows). */
export type Get<P extends PathOf<"get">> = Answer<Op<P, "get">>;
/** The JSON body of `M` `P`. */
export type BodyOf<M extends Method, P extends PathOf<M>> = Body<Op<P, M>>;
/** The query of GET `P`. */
export type QueryOf<P extends PathOf<"get">> = Query<Op<P, "get">>;
/** The path parameters of GET `P`. */
export type ParamsOf<P extends PathOf<"get">> = PathParams<Op<P, "get">>;

/** A path template filled in: each `{name}` becomes its parameter, URL-encoded; then the query (non-empty entries). */
export function url(template: string, init: { path?: unknown; query?: unknown } = {}): string {
  const params = (init.path ?? {}) as Record<string, string | number>;
  const filled = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params[name])));
  return filled + qs((init.query ?? {}) as Parameters<typeof qs>[0]);
}

/** How a typed client sends a request: the method, the filled-in URL, the JSON body; it answers the parsed JSON. */
export type Send = (method: string, filled: string, body?: unknown) => Promise<unknown>;

/** A client typed by path and method over `send` (the session's credentials, or another one's: the card board's key). */
export function typedClient(send: Send) {
  const verb =
    <M extends Method>(method: M) =>
    <P extends PathOf<M>>(path: P, ...[init]: Args<Op<P, M>>): Promise<Answer<Op<P, M>>> =>
      send(method.toUpperCase(), url(path, init), (init as { body?: unknown } | undefined)?.body) as Promise<Answer<Op<P, M>>>;
  return { get: verb("get"), post: verb("post"), put: verb("put"), patch: verb("patch"), delete: verb("delete") };
}

/**
 * The API with the session's credentials, typed: `api.get("/mail/v1/workspaces/{workspace_id}/domains",
 * { path: { workspace_id } })` answers the documented type. Errors are thrown as ApiError (request, above).
 */
export const api = typedClient(async (method, filled, body) => json(await request(method, filled, body)));

/** The URL of GET `path`, for a link (a download, a JSON document opened in a tab). */
export const apiHref = <P extends PathOf<"get">>(path: P, ...[init]: Args<Op<P, "get">>) => url(path, init);

/** GET of a URL filled in by url(), for a generic caller that types the answer itself (PagedTable). */
export const getUrl = async (filled: string): Promise<unknown> => json(await request("GET", filled));

/** GET `path` as the raw Response (a file, CSV, a text body), with the same credentials and errors. */
export const getRaw = <P extends PathOf<"get">>(path: P, ...[init]: Args<Op<P, "get">>) => request("GET", url(path, init));

/** Work that needs the session once more before it ends (revoking keys minted for it). */
const signOutWork: (() => Promise<unknown>)[] = [];
export const beforeSignOut = (fn: () => Promise<unknown>) => void signOutWork.push(fn);

/** Signs the console out: the registered work first (its failures do not keep anyone signed in), then the session. */
export async function signOut(): Promise<void> {
  await Promise.allSettled(signOutWork.map((fn) => fn()));
  await api.post("/platform/v1/auth/logout-current").catch(() => {});
  setTokens(null);
}

/** Query string from the non-empty entries. */
export function qs(params: Record<string, string | number | boolean | null | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** "policy[0].actions", "/policy/0/actions" and "body.policy" all name the form field "policy". */
export function fieldOf(detail: FieldDetail): string {
  return detail.field.replace(/^\/?(body[./])?/, "").split(/[./[]/)[0] ?? "";
}
