/**
 * The extraction jobs's migrations, imported as text so `bun build --compile` embeds them; pg/ holds
 * the PostgreSQL variants. The rules (naming, append-only) are in src/kernel/migrations/index.ts;
 * test/core/migrations.test.ts checks that every .sql file here is listed.
 */
import type { Migration } from "../../../core/store/migrations";
import m0080 from "./0080_trawl_jobs.sql" with { type: "text" };
import m0081 from "./0081_trawl_claim_indexes.sql" with { type: "text" };

export const migrations: readonly Migration[] = [
  { name: "0080_trawl_jobs", sql: m0080 },
  { name: "0081_trawl_claim_indexes", sql: m0081 },
];
