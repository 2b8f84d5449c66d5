/**
 * GET /metrics (Prometheus text) and the gauges of the kernel itself. With METRICS_TOKEN
 * set, only `Authorization: Bearer <token>` reads it: the numbers (routes, queue sizes,
 * memory) are an outline of the deployment that a public address need not give away.
 */
import { statSync } from "node:fs";
import { Elysia } from "elysia";
import { ApiError } from "./errors";
import type { Metrics } from "./metrics";
import { safeEqual } from "./secrets";

/** `detail`: the operation's OpenAPI tags and security (the app names the schemes). */
export function metricsRoute(metrics: Metrics, token: string | null, detail: { tags?: string[]; security?: Record<string, string[]>[] } = {}) {
  const expected = token ? `Bearer ${token}` : null;
  return new Elysia({ name: "metrics-route" }).get(
    "/metrics",
    async ({ request }) => {
      if (expected && !safeEqual(request.headers.get("authorization") ?? "", expected)) {
        throw new ApiError(401, "UNAUTHORIZED", "GET /metrics needs Authorization: Bearer <METRICS_TOKEN>", undefined, { "www-authenticate": 'Bearer realm="metrics"' });
      }
      return new Response(await metrics.render(), { headers: { "content-type": "text/plain; version=0.0.4" } });
    },
    {
      detail: {
        ...detail,
        summary: "Prometheus metrics (text exposition format 0.0.4)",
        description: "With METRICS_TOKEN set, only Authorization: Bearer <METRICS_TOKEN> reads it (401 otherwise).",
        responses: { 200: { description: "Metrics", content: { "text/plain": { schema: { type: "string" } } } } },
      },
    },
  );
}

const fileSize = (path: string) => {
  try {
    return statSync(path).size;
  } catch {
    return 0; // no WAL right after a checkpoint, or the file is being replaced
  }
};

/**
 * Database file and WAL size, read from the file system at scrape time (no query), and the
 * group commit's counts since start: transactions per commit is what one commit's cost is
 * shared by (core/store/sqlite.ts).
 */
export function registerDatabaseGauges(metrics: Metrics, dbPath: string, commits: { commits: number; transactions: number }) {
  metrics.gauge("bunker_db_size_bytes", "Size of the SQLite database file.", () => fileSize(dbPath));
  metrics.gauge("bunker_db_wal_size_bytes", "Size of the SQLite write-ahead log (grows until a checkpoint).", () => fileSize(`${dbPath}-wal`));
  metrics.gauge("bunker_db_commits", "SQLite commits since start (each carries a group of transactions).", () => commits.commits);
  metrics.gauge("bunker_db_committed_transactions", "Transactions committed since start, in those commits.", () => commits.transactions);
}
