/** Operator routes: list accounts and change their status; download a backup of the database (SQLite). */
import { Elysia } from "elysia";
import { t } from "../../../../core/schema";
import { principalPlugin } from "../../../../access/http";
import { requireHuman } from "../../../../access/principal";
import { HUMAN_CALLER, secured } from "../../../../access/openapi";
import { open, rm } from "node:fs/promises";
import { join } from "node:path";
import { snapshotLiveDatabase } from "../../../../core/backup";
import { sqliteOf } from "../../../../core/db";
import { ApiError, forbidden } from "../../../../core/errors";
import { uuid } from "../../../../core/ids";
import { audit } from "../../../../kernel/tenancy";
import { buildPage, decodeCursor, parseLimit } from "../../../../core/pagination";
import type { RouteDeps } from "../../route-deps";
import type { AccountService } from "../accounts";
import * as store from "../store/accounts";
import { operatorAccountView } from "../views";
import { ErrorBody, ListQuery, OperatorAccount, OperatorAccountList, Uuid } from "../../schemas";

const tags = ["Platform: operator"];
const STATUS_BY_VERB = { suspend: "suspended", deactivate: "deactivated", block: "blocked", reactivate: "active" } as const;

const PG_BACKUP =
  "This instance runs on PostgreSQL: back it up with PostgreSQL's tools (pg_dump --format=custom --file=bunker.dump \"$DATABASE_URL\"), and copy the object store and MASTER_KEY alongside.";

/** A stream of the file that deletes it at once (the open handle keeps it readable) and closes the handle at the end or on cancel. */
async function streamAndDelete(path: string): Promise<{ stream: ReadableStream<Uint8Array>; size: number }> {
  const fh = await open(path, "r");
  try {
    const { size } = await fh.stat();
    await rm(path, { force: true });
    const stream = new ReadableStream<Uint8Array>({
      async pull(c) {
        const buf = new Uint8Array(256 * 1024);
        const { bytesRead } = await fh.read(buf, 0, buf.length, null);
        if (bytesRead) return c.enqueue(buf.subarray(0, bytesRead));
        await fh.close();
        c.close();
      },
      cancel: () => fh.close(),
    });
    return { stream, size };
  } catch (e) {
    await fh.close();
    throw e;
  }
}

export function adminRoutes(platform: RouteDeps & { readonly accounts: AccountService }) {
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
      return buildPage(await store.listAccounts(platform.ctx.db, after, limit + 1), limit, (r) => ({ id: r.id }), operatorAccountView);
    }, { query: ListQuery, response: { 200: OperatorAccountList, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody }, detail: { tags, summary: "List accounts (operators)" } })
    .post("/accounts/:account_id/:verb", async ({ principal, params, meta }) => {
      const op = requireOperator(principal);
      const status = STATUS_BY_VERB[params.verb as keyof typeof STATUS_BY_VERB];
      return operatorAccountView(await platform.accounts.setStatus(op.accountId, params.account_id, status, meta));
    }, {
      params: t.Object({ account_id: Uuid(), verb: t.Union([t.Literal("suspend"), t.Literal("deactivate"), t.Literal("block"), t.Literal("reactivate")]) }),
      response: { 200: OperatorAccount, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
      detail: { tags, summary: "Suspend, deactivate, block or reactivate an account (operators). Any status but active revokes its sessions." },
    })
    .get("/backup", async ({ principal, meta }) => {
      requireOperator(principal);
      const lite = sqliteOf(platform.ctx.db);
      if (!lite) throw new ApiError(409, "BACKUP_NOT_AVAILABLE_ON_POSTGRES", PG_BACKUP);
      const tmp = join(platform.ctx.config.dataDir, `.backup-download-${uuid()}.db`);
      try {
        await snapshotLiveDatabase(lite, tmp);
        const { stream, size } = await streamAndDelete(tmp);
        const stamp = platform.ctx.clock.iso().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
        await audit(platform.ctx.db, platform.ctx, { actor: principal!, action: "instance.backup.download", meta, metadata: { bytes: size } });
        return new Response(stream, {
          headers: {
            "content-type": "application/vnd.sqlite3",
            "content-length": String(size),
            "content-disposition": `attachment; filename="bunker-${stamp}.db"`,
            "cache-control": "no-store",
          },
        });
      } catch (e) {
        await rm(tmp, { force: true });
        throw e;
      }
    }, {
      response: { 401: ErrorBody, 403: ErrorBody, 409: ErrorBody },
      detail: {
        tags,
        summary: "Download a backup of the database (operators, SQLite)",
        description:
          "A consistent online snapshot of the SQLite database (VACUUM INTO, taken while the server keeps writing), as an attachment bunker-<UTC time>.db: the same file `bunker backup` writes as <backup>/bunker.db, which `bunker restore <file>` takes. " +
          "Not included: the objects (DATA_DIR/objects or S3) and the master key: use `bunker backup` on the host for those. 403 OPERATOR_REQUIRED for other accounts. On PostgreSQL: 409 BACKUP_NOT_AVAILABLE_ON_POSTGRES (use pg_dump). Audited (instance.backup.download).",
        responses: {
          200: { description: "The SQLite database file, as an attachment", content: { "application/vnd.sqlite3": { schema: { type: "string" as const, format: "binary" } } } },
        },
      },
    });
}
