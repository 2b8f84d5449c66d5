/**
 * The pure parts of the engine's fan-out: outbox scopes ("webhook:<product>:<scope id>"),
 * the signed envelope's bytes and endpoint type filters.
 */

export const SCOPE_PREFIX = "webhook:";

export function parseScope(scope: string): { product: string; scopeId: string } | null {
  if (!scope.startsWith(SCOPE_PREFIX)) return null;
  const rest = scope.slice(SCOPE_PREFIX.length);
  const colon = rest.indexOf(":");
  if (colon <= 0 || colon === rest.length - 1) return null;
  return { product: rest.slice(0, colon), scopeId: rest.slice(colon + 1) };
}

/**
 * The envelope, serialised once: retries and replays send these exact bytes. `data` is the
 * outbox's JSON text spliced in as is (not parsed and re-serialised). A product with an
 * envelope scope field (the community's community_id) gets it after created_at.
 */
export function envelope(e: { id: string; type: string; created_at: string; dataJson: string; scopeField: string | undefined; scopeId: string }): string {
  const head = `{"id":${JSON.stringify(e.id)},"type":${JSON.stringify(e.type)},"created_at":${JSON.stringify(e.created_at)}`;
  const scope = e.scopeField ? `,${JSON.stringify(e.scopeField)}:${JSON.stringify(scopeOf(e.dataJson, e.scopeField, e.scopeId))}` : "";
  return `${head}${scope},"data":${e.dataJson}}`;
}

/**
 * The envelope's scope field: the event's data.<field> when it has one (e.g. community
 * events delivered to the workspace scope), else the scope id (a community scope).
 */
function scopeOf(dataJson: string, field: string, scopeId: string): string {
  try {
    const id = (JSON.parse(dataJson) as Record<string, unknown> | null)?.[field];
    return typeof id === "string" ? id : scopeId;
  } catch {
    return scopeId;
  }
}

/** null = every type (also future ones); a malformed filter matches nothing. */
export function parseTypes(json: string): Set<string> | null | "invalid" {
  try {
    const v = JSON.parse(json);
    if (!Array.isArray(v)) return "invalid";
    return v.length === 0 ? null : new Set(v.map(String));
  } catch {
    return "invalid";
  }
}
