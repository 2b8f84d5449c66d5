/**
 * Credential before body: a route that declares security refuses a request carrying none of
 * the credentials it declares with 401 before its body, query or path is validated.
 *
 * Elysia validates a route's input before its handlers (and before `resolve` hooks) run, so
 * a service that checked the caller in its handler answered 400 to an anonymous request with
 * a bad body, telling a stranger about the contract before asking who they are. The gate
 * runs in the kernel's transform hook, which precedes validation, and reads what each route
 * already declares for the OpenAPI (`detail.security`, see access/openapi.ts), interpreting
 * the security schemes as OpenAPI defines them:
 * - no requirement (`[]`), or one empty requirement (`{}`): nothing is needed;
 * - otherwise one requirement must be met: every scheme it names present in the request
 *   (`http` bearer: an `Authorization: Bearer ...` header; `apiKey`: the named cookie,
 *   header or query parameter).
 * Presence only: whether the credential is valid is the business of the principal resolver
 * (access/http.ts), which for platform callers also runs before validation.
 */
import { unauthorized } from "./errors";
import type { RouteInfo } from "./openapi";

type Requirement = Record<string, unknown>;
type Presence = (request: Request) => boolean;

/** What a route declares: its requirements, and a check that one of them is present. */
export interface RouteSecurity {
  requirements: readonly Requirement[];
  /** True when a credential is needed at all (no empty requirement). */
  needed: boolean;
  present: Presence;
}

const OPEN: RouteSecurity = { requirements: [], needed: false, present: () => true };

const BEARER = /^bearer\s+\S/i;

function schemePresence(scheme: any): Presence {
  if (scheme?.type === "http" && String(scheme.scheme).toLowerCase() === "bearer") return (r) => BEARER.test(r.headers.get("authorization") ?? "");
  if (scheme?.type === "apiKey" && typeof scheme.name === "string") {
    const name: string = scheme.name;
    if (scheme.in === "header") return (r) => r.headers.has(name);
    if (scheme.in === "query") return (r) => new URL(r.url).searchParams.has(name);
    if (scheme.in === "cookie") {
      return (r) => {
        const header = r.headers.get("cookie");
        return !!header && !!new Bun.CookieMap(header).get(name);
      };
    }
  }
  // A scheme this gate cannot see (oauth2 and the like) never blocks: the handler decides.
  return () => true;
}

export class CredentialGate {
  /** Route template -> method -> what it declares (no key string built per request). */
  private byRoute: Map<string, Map<string, RouteSecurity>> | null = null;

  constructor(
    private readonly routes: () => readonly RouteInfo[],
    private readonly schemes: Record<string, unknown>,
  ) {}

  /** What the matched route declares (OPEN for routes that declare nothing). */
  of(method: string, route: string | undefined): RouteSecurity {
    if (!route) return OPEN;
    return (this.byRoute ?? this.table()).get(route)?.get(method) ?? OPEN;
  }

  /** Throws 401 when the route needs a credential and the request carries none it declares. */
  check(request: Request, route: string | undefined): RouteSecurity {
    const security = this.of(request.method, route);
    if (security.needed && !security.present(request)) throw unauthorized("Missing credentials: this operation needs one of its declared security schemes");
    return security;
  }

  /** Built on the first request, once every route is mounted (like the API documents). */
  private table(): Map<string, Map<string, RouteSecurity>> {
    if (this.byRoute) return this.byRoute;
    const presence = new Map(Object.entries(this.schemes).map(([name, scheme]) => [name, schemePresence(scheme)]));
    const table = new Map<string, Map<string, RouteSecurity>>();
    for (const r of this.routes()) {
      const requirements = r.hooks?.detail?.security as Requirement[] | undefined;
      if (!requirements?.length) continue;
      const needed = !requirements.some((req) => Object.keys(req).length === 0);
      const checks = requirements.map((req) => Object.keys(req).map((name) => presence.get(name) ?? (() => true)));
      const present: Presence = (request) => checks.some((all) => all.every((p) => p(request)));
      let byMethod = table.get(r.path);
      if (!byMethod) table.set(r.path, (byMethod = new Map()));
      byMethod.set(r.method, { requirements, needed, present });
    }
    return (this.byRoute = table);
  }
}
