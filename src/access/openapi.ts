/**
 * How callers authenticate, as OpenAPI security schemes, and the requirement each kind of
 * route declares. A route group states its choice where its guard is declared:
 *
 *   .use(principalPlugin(resolver)).guard(secured(PLATFORM_CALLER))   // every route below
 *   .post("/signin", ..., { detail: { security: PUBLIC, ... } })       // one route
 *
 * core/openapi.ts copies `detail.security` into each operation; the OpenAPI test checks
 * every operation made a choice (an empty list is the deliberate "public").
 */

export const SECURITY_SCHEMES = {
  consoleToken: { type: "http", scheme: "bearer", bearerFormat: "opaque console token or pat_...", description: "Console access token (from sign-in) or personal access token (pat_...)." },
  apiKey: { type: "http", scheme: "bearer", bearerFormat: "svc_live_...", description: "Workspace API key (svc_live_...): acts in its own workspace, within its policy." },
  consoleCookie: { type: "apiKey", in: "cookie", name: "auth_token", description: "The console's session cookie, set by sign-in (same value as the access token)." },
  appUserToken: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "Access token of an end user of this Auth App (RS256, issuer <auth_base_url>/<app_slug>)." },
  publishableKey: { type: "http", scheme: "bearer", bearerFormat: "pk_...", description: "An Auth App's publishable key (pk_...): sign-up from a browser or mobile app." },
  m2mToken: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "M2M access token of this Auth App (client_credentials grant)." },
  metricsToken: { type: "http", scheme: "bearer", description: "METRICS_TOKEN, when the operator set one (GET /metrics is open otherwise)." },
} as const;

type Scheme = keyof typeof SECURITY_SCHEMES;
export type Requirement = Partial<Record<Scheme, string[]>>;
const any = (...schemes: Scheme[]): Requirement[] => schemes.map((s) => ({ [s]: [] }));

/** The schemes the platform's principal resolver answers (access/http.ts principalPlugin). */
export const PLATFORM_SCHEMES: ReadonlySet<string> = new Set<Scheme>(["consoleToken", "apiKey", "consoleCookie"]);

/** No credential. */
export const PUBLIC: Requirement[] = [];
/** Any platform principal: console session, personal token, workspace API key (policy decides). */
export const PLATFORM_CALLER = any("consoleToken", "apiKey", "consoleCookie");
/** A signed-in human (console session or personal token): requireHuman / requireSession routes. */
export const HUMAN_CALLER = any("consoleToken", "consoleCookie");
/** An end user of an Auth App, by the App's access token. */
export const APP_USER = any("appUserToken");
/** An administrative caller of an Auth App: a platform principal allowed the action, or an M2M token of the App. */
export const APP_ADMIN = any("consoleToken", "apiKey", "consoleCookie", "m2mToken");

/** Sign-up of an end user: the App's publishable key, or a workspace API key allowed auth.user.create. */
export const APP_SIGNUP = any("publishableKey", "apiKey");
/** Token checks: the bearer token, when sent, is the token under test, not a caller credential (`{}`: none needed). */
export const OPTIONAL_APP_TOKEN: Requirement[] = [{}, ...any("appUserToken", "m2mToken")];

/** For `.guard(...)`: every route declared after it in the group gets this requirement. */
export const secured = (security: Requirement[]) => ({ detail: { security } });
