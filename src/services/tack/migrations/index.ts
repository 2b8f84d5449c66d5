/**
 * The card board's migrations, imported as text so `bun build --compile` embeds them; pg/ holds
 * the PostgreSQL variants. The rules (naming, append-only) are in src/kernel/migrations/index.ts;
 * test/core/migrations.test.ts checks that every .sql file here is listed.
 */
import type { Migration } from "../../../core/store/migrations";
import m0060 from "./0060_tack_board.sql" with { type: "text" };
import m0061 from "./0061_tack_webhook_scope.sql" with { type: "text" };
import pg0060 from "./pg/0060_tack_board.sql" with { type: "text" };

export const migrations: readonly Migration[] = [
  { name: "0060_tack_board", sql: m0060, pg: pg0060 },
  { name: "0061_tack_webhook_scope", sql: m0061 },
];
