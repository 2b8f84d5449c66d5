/** Operator routes: list accounts and change their status. */
import { Elysia, t } from "elysia";
import { principalPlugin } from "../../../access/http";
import { requireHuman } from "../../../access/principal";
import { HUMAN_CALLER, secured } from "../../../access/openapi";
import { forbidden } from "../../../core/errors";
import { buildPage, decodeCursor, parseLimit } from "../../../core/pagination";
import type { Platform } from "../service";
import * as store from "../store/accounts";
import { ListQuery } from "../schemas";

const tags = ["Platform: operator"];
const STATUS_BY_VERB = { suspend: "suspended", deactivate: "deactivated", block: "blocked", reactivate: "active" } as const;

const view = (a: store.AccountRow) => ({
  id: a.id, email: a.email, username: a.username, display_name: a.display_name, status: a.status, is_operator: !!a.is_operator, created_at: a.created_at, updated_at: a.updated_at,
});

export function adminRoutes(platform: Platform) {
  const requireOperator = (p: any) => {
    const h = requireHuman(p, "Operator routes");
    if (!h.isOperator) throw forbidden("Operators only", "OPERATOR_REQUIRED");
    return h;
  };
  return new Elysia({ prefix: "/v1/admin" })
    .use(principalPlugin(platform.authz))
    .guard(secured(HUMAN_CALLER))
    .get("/accounts", async ({ principal, query }) => {
      requireOperator(principal);
      const limit = parseLimit(query.limit, 50, 200);
      const after = decodeCursor<{ id: string }>(query.cursor)?.id ?? null;
      return buildPage(await store.listAccounts(platform.ctx.db, after, limit + 1), limit, (r) => ({ id: r.id }), view);
    }, { query: ListQuery, detail: { tags, summary: "List accounts (operators)" } })
    .post("/accounts/:account_id/:verb", async ({ principal, params, meta }) => {
      const op = requireOperator(principal);
      const status = STATUS_BY_VERB[params.verb as keyof typeof STATUS_BY_VERB];
      return view(await platform.accounts.setStatus(op.accountId, params.account_id, status, meta));
    }, {
      params: t.Object({ account_id: t.String(), verb: t.Union([t.Literal("suspend"), t.Literal("deactivate"), t.Literal("block"), t.Literal("reactivate")]) }),
      detail: { tags, summary: "Suspend, deactivate, block or reactivate an account (operators). Any status but active revokes its sessions." },
    });
}
