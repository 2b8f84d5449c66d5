/**
 * The waitlist service's migrations, imported as text so `bun build --compile` embeds them; pg/ holds
 * the PostgreSQL variants. The rules (naming, append-only) are in src/kernel/migrations/index.ts;
 * test/core/migrations.test.ts checks that every .sql file here is listed.
 */
import type { Migration } from "../../../core/store/migrations";
import m0070 from "./0070_waitlist.sql" with { type: "text" };
import m0071 from "./0071_waitlist_counters.sql" with { type: "text" };
import m0072 from "./0072_waitlist_counters_to_core.sql" with { type: "text" };
import m0096 from "./0096_waitlist_invite_outcome.sql" with { type: "text" };

export const migrations: readonly Migration[] = [
  { name: "0070_waitlist", sql: m0070 },
  { name: "0071_waitlist_counters", sql: m0071 },
  { name: "0072_waitlist_counters_to_core", sql: m0072 },
  { name: "0096_waitlist_invite_outcome", sql: m0096 },
];
