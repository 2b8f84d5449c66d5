/**
 * Reading an App's audit log (action auth.audit.list): sign-ins and their failures, sign-ups,
 * MFA events and admin changes, newest first, keyset pages on the time-ordered id.
 *
 * Filters: action (exact, or a prefix pattern "user.*"; "*" is the same as none), actor_id,
 * target_id, outcome (success | failure), since (inclusive) / until (exclusive) as ISO 8601.
 * Filters are not part of the cursor (as in the platform's audit log): send the same filters
 * with every page. Unknown or malformed values are 400, never an empty page that looks valid.
 */
import { isValidActionPattern } from "../../../access/policy";
import { badRequest, invalidField } from "../../../core/errors";
import { isUuid } from "../../../core/ids";
import { buildPage, decodeCursor, parseLimit, type Page } from "../../../core/pagination";
import type { AppContext } from "../../../context";
import { parseIsoInstant } from "../../platform/identity/credentials";
import type { LoadedApp } from "../apps/service";
import type { AdminCredentials, AppAccess } from "../apps/access";
import { listAuthAudit, type AuditFilter } from "../audit";
import { authAuditView, type AuthAuditView } from "./views";

export const AUTH_AUDIT_DEFAULT_LIMIT = 50;
export const AUTH_AUDIT_MAX_LIMIT = 200;
/** Ids of users, M2M clients, keys, tenants ... are far shorter; this only bounds the input. */
const ID_MAX = 200;

export interface AuthAuditQuery {
  action?: string;
  actor_id?: string;
  target_id?: string;
  outcome?: string;
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
}

const malformedCursor = () => badRequest("Malformed cursor", [{ field: "cursor", reason: "not a cursor issued by this API" }], "INVALID_CURSOR");

function optionalId(v: string | undefined, field: string): string | null {
  if (v === undefined) return null;
  if (v === "" || v.length > ID_MAX) throw invalidField(field, `1-${ID_MAX} characters`);
  return v;
}

/** Turns the query string into store filters; 400 naming the field for anything malformed. */
export function parseAuditFilter(q: AuthAuditQuery): AuditFilter {
  const f: AuditFilter = {};
  const action = q.action === "" || q.action === "*" ? undefined : q.action;
  if (action !== undefined) {
    if (!isValidActionPattern(action)) throw invalidField("action", 'an action name like "user.signin" or a prefix pattern like "user.*"');
    if (action.endsWith(".*")) f.actionPrefix = action.slice(0, -1);
    else f.action = action;
  }
  f.actor_id = optionalId(q.actor_id, "actor_id");
  f.target_id = optionalId(q.target_id, "target_id");
  if (q.outcome !== undefined) {
    if (q.outcome !== "success" && q.outcome !== "failure") throw invalidField("outcome", "success or failure");
    f.outcome = q.outcome;
  }
  // created_at is stored as toISOString(), so bounds normalised the same way make the SQL
  // string comparison a correct time comparison, whatever offset the caller sent.
  const since = q.since ? parseIsoInstant(q.since, "since") : null;
  const until = q.until ? parseIsoInstant(q.until, "until") : null;
  if (since !== null && until !== null && since >= until) throw invalidField("until", "must be later than since");
  f.since = since === null ? null : new Date(since).toISOString();
  f.until = until === null ? null : new Date(until).toISOString();
  return f;
}

export class AuditQueryService {
  constructor(
    private readonly ctx: AppContext,
    /** The parts of the Auth service this feature uses (AuthService passes itself). */
    private readonly auth: { access: AppAccess; m2m: { tokenLog: { flush(): Promise<unknown> } } },
  ) {}

  /**
   * One page of the App's log, for a workspace key / console session of the App's workspace
   * or an M2M token of the App allowed auth.audit.list (401 / 403, another workspace 404).
   */
  async list(app: LoadedApp, credentials: AdminCredentials, q: AuthAuditQuery): Promise<Page<AuthAuditView>> {
    await this.auth.access.admin(app, credentials, "auth.audit.list");
    await this.auth.m2m.tokenLog.flush(); // token exchanges are written behind: show them all
    const limit = parseLimit(q.limit, AUTH_AUDIT_DEFAULT_LIMIT, AUTH_AUDIT_MAX_LIMIT);
    const filter = parseAuditFilter(q);
    const cursor = decodeCursor<{ id?: unknown }>(q.cursor);
    let before: string | null = null;
    if (cursor !== null) {
      if (typeof cursor.id !== "string" || !isUuid(cursor.id)) throw malformedCursor();
      before = cursor.id;
    }
    const rows = await listAuthAudit(this.ctx.db, app.id, filter, before, limit + 1);
    return buildPage(rows, limit, (r) => ({ id: r.id }), authAuditView);
  }
}
