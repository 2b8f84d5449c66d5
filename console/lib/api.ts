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

export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await request(method, path, body);
  if (res.status === 204) return null as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : null) as T;
}

export const get = <T = any>(path: string) => api<T>("GET", path);

/** Work that needs the session once more before it ends (revoking keys minted for it). */
const signOutWork: (() => Promise<unknown>)[] = [];
export const beforeSignOut = (fn: () => Promise<unknown>) => void signOutWork.push(fn);

/** Signs the console out: the registered work first (its failures do not keep anyone signed in), then the session. */
export async function signOut(): Promise<void> {
  await Promise.allSettled(signOutWork.map((fn) => fn()));
  await api("POST", "/platform/v1/auth/logout-current").catch(() => {});
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
