/**
 * Reading a workspace's audit log (action audit.list): newest first, keyset pages on the
 * time-ordered id, filters by actor, action (exact or "prefix.*") and time window.
 * Filters are not part of the cursor: send the same filters with every page.
 */
import { isValidActionPattern } from "../../../access/policy";
import type { Principal } from "../../../access/principal";
import { badRequest } from "../../../core/errors";
import { buildPage, decodeCursor, parseLimit } from "../../../core/pagination";
import type { AppContext } from "../../../context";
import type { Authz } from "../../../kernel/tenancy";
import { parseIsoInstant } from "../identity/credentials";
import { listAudit } from "./store";
import { auditView } from "./views";

export const AUDIT_DEFAULT_LIMIT = 50;
export const AUDIT_MAX_LIMIT = 200;

export interface AuditQuery {
  actor_id?: string;
  action?: string;
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
}

export class AuditLogService {
  constructor(
    private readonly ctx: AppContext,
    private readonly authz: Authz,
  ) {}

  async list(p: Principal, slug: string, q: AuditQuery) {
    const { workspace } = await this.authz.authorizeWorkspace(this.ctx.db, p, { slug }, "audit.list");
    const limit = parseLimit(q.limit, AUDIT_DEFAULT_LIMIT, AUDIT_MAX_LIMIT);
    const before = decodeCursor<{ id: unknown }>(q.cursor)?.id ?? null;
    if (before !== null && typeof before !== "string") {
      throw badRequest("Malformed cursor", [{ field: "cursor", reason: "not a cursor issued by this API" }], "INVALID_CURSOR");
    }
    let action = q.action || undefined;
    if (action === "*") action = undefined; // everything: same as no filter
    else if (action !== undefined && !isValidActionPattern(action)) {
      throw badRequest("Invalid action filter", [{ field: "action", reason: 'an action name like "apikey.create" or a prefix pattern like "apikey.*"' }]);
    }
    // created_at is stored as toISOString(), so normalising the bounds the same way makes
    // the string comparison in SQL a correct time comparison, whatever offset was sent.
    const since = q.since ? new Date(parseIsoInstant(q.since, "since")).toISOString() : undefined;
    const until = q.until ? new Date(parseIsoInstant(q.until, "until")).toISOString() : undefined;
    const rows = await listAudit(this.ctx.db, { workspace_id: workspace.id, actor_id: q.actor_id, action, since, until, before_id: before }, limit + 1);
    return buildPage(rows, limit, (r) => ({ id: r.id }), auditView);
  }
}
