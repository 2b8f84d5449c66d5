/**
 * The Auth's migrations, imported as text so `bun build --compile` embeds them; pg/ holds
 * the PostgreSQL variants. The rules (naming, append-only) are in src/kernel/migrations/index.ts;
 * test/core/migrations.test.ts checks that every .sql file here is listed.
 */
import type { Migration } from "../../../core/store/migrations";
import m0030 from "./0030_auth.sql" with { type: "text" };
import m0031 from "./0031_auth_oauth.sql" with { type: "text" };
import pg0030 from "./pg/0030_auth.sql" with { type: "text" };
import pg0031 from "./pg/0031_auth_oauth.sql" with { type: "text" };

export const migrations: readonly Migration[] = [
  { name: "0030_auth", sql: m0030, pg: pg0030 },
  { name: "0031_auth_oauth", sql: m0031, pg: pg0031 },
];
