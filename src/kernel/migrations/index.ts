/**
 * The kernel's migrations (core_*, platform_* = tenancy and accounts, webhook_* tables), and
 * schemaOf: the kernel's and every module's as the one list both engines run.
 *
 * Where migrations live: with their owner. A service's are in src/services/<name>/migrations/,
 * listed by that folder's index.ts (imported as text, so `bun build --compile` embeds them)
 * and declared by its module (`migrations` on ServiceModule). test/core/migrations.test.ts
 * checks that every .sql file of every such folder is listed.
 *
 * Names, and so the order: every list is merged and sorted by name. A name is recorded in
 * core_migrations once applied, so a shipped file is never renamed, moved to another name or
 * edited (append-only; the test pins the shipped set and its contents).
 * - 0001-0096: the shipped files, numbered by per-service decades; frozen, no new ones.
 * - New files: `YYYYMMDDHHMMSS_<owner>_<what>.sql` (UTC time of writing; <owner> the module's
 *   name, or core / platform / webhooks here). A timestamp never runs out, sorts after every
 *   numbered file, and two services writing one on the same day do not collide.
 *
 * PostgreSQL runs the same list: a file whose SQL is not portable has a variant of the same
 * name in its folder's pg/ (types such as citext and BIGINT, functions), given as `pg`; every
 * other file is shared as is. test/pg/ checks that both engines end with the same schema.
 * New files should need no variant: write epoch-ms columns as BIGINT (SQLite gives it INTEGER
 * affinity, like INTEGER), keep ISO timestamps as TEXT set by the application, and leave
 * case-insensitive columns, upserts and date functions to a pg/ variant only when unavoidable.
 */
import { type Migration, orderMigrations } from "../../core/store/migrations";
import m0001 from "./0001_core_base.sql" with { type: "text" };
import m0002 from "./0002_core_ratelimit.sql" with { type: "text" };
import m0003 from "./0003_core_idempotency.sql" with { type: "text" };
import m0004 from "./0004_core_events.sql" with { type: "text" };
import m0005 from "./0005_core_mail_outbox.sql" with { type: "text" };
import m0006 from "./0006_core_key_check.sql" with { type: "text" };
import m0007 from "./0007_core_job_ticks.sql" with { type: "text" };
import m0008 from "./0008_core_ratelimit_windows.sql" with { type: "text" };
import m0010 from "./0010_platform_accounts.sql" with { type: "text" };
import m0011 from "./0011_platform_workspaces.sql" with { type: "text" };
import m0012 from "./0012_platform_keys_audit.sql" with { type: "text" };
import m0013 from "./0013_platform_members.sql" with { type: "text" };
import m0014 from "./0014_platform_identities.sql" with { type: "text" };
import m0015 from "./0015_platform_mfa.sql" with { type: "text" };
import m0020 from "./0020_webhooks.sql" with { type: "text" };
import m0021 from "./0021_webhooks_engine.sql" with { type: "text" };
import m0022 from "./0022_webhooks_status.sql" with { type: "text" };
import m0023 from "./0023_webhooks_lease_owner.sql" with { type: "text" };
import m0033 from "./0033_platform_member_reads.sql" with { type: "text" };
import m0095 from "./0095_member_service_reads.sql" with { type: "text" };
import pg0002 from "./pg/0002_core_ratelimit.sql" with { type: "text" };
import pg0003 from "./pg/0003_core_idempotency.sql" with { type: "text" };
import pg0010 from "./pg/0010_platform_accounts.sql" with { type: "text" };
import pg0011 from "./pg/0011_platform_workspaces.sql" with { type: "text" };
import pg0012 from "./pg/0012_platform_keys_audit.sql" with { type: "text" };
import pg0014 from "./pg/0014_platform_identities.sql" with { type: "text" };
import pg0020 from "./pg/0020_webhooks.sql" with { type: "text" };
import pg0033 from "./pg/0033_platform_member_reads.sql" with { type: "text" };

export const KERNEL_MIGRATIONS: readonly Migration[] = [
  { name: "0001_core_base", sql: m0001 },
  { name: "0002_core_ratelimit", sql: m0002, pg: pg0002 },
  { name: "0003_core_idempotency", sql: m0003, pg: pg0003 },
  { name: "0004_core_events", sql: m0004 },
  { name: "0005_core_mail_outbox", sql: m0005 },
  { name: "0006_core_key_check", sql: m0006 },
  { name: "0007_core_job_ticks", sql: m0007 },
  { name: "0008_core_ratelimit_windows", sql: m0008 },
  { name: "0010_platform_accounts", sql: m0010, pg: pg0010 },
  { name: "0011_platform_workspaces", sql: m0011, pg: pg0011 },
  { name: "0012_platform_keys_audit", sql: m0012, pg: pg0012 },
  { name: "0013_platform_members", sql: m0013 },
  { name: "0014_platform_identities", sql: m0014, pg: pg0014 },
  { name: "0015_platform_mfa", sql: m0015 },
  { name: "0020_webhooks", sql: m0020, pg: pg0020 },
  { name: "0021_webhooks_engine", sql: m0021 },
  { name: "0022_webhooks_status", sql: m0022 },
  { name: "0023_webhooks_lease_owner", sql: m0023 },
  { name: "0033_platform_member_reads", sql: m0033, pg: pg0033 },
  { name: "0095_member_service_reads", sql: m0095 },
];

/** Names a file may have: a shipped number (frozen) or a timestamp with its owner. */
const SHIPPED_NAME = /^\d{4}_[a-z0-9_]+$/;
const KERNEL_OWNERS = ["core", "platform", "webhooks"];

/**
 * The schema of an app of these modules: the kernel's migrations and each module's, in one
 * order (by name). A new file whose name does not carry its timestamp and owner is refused
 * here, at start-up of any test, before it ships under a name that cannot change.
 */
export function schemaOf(modules: readonly { name: string; migrations?: readonly Migration[] }[]): Migration[] {
  const owned = [{ owners: KERNEL_OWNERS, list: KERNEL_MIGRATIONS }, ...modules.map((m) => ({ owners: [m.name], list: m.migrations ?? [] }))];
  for (const { owners, list } of owned) {
    for (const m of list) {
      const stamped = owners.some((o) => new RegExp(`^\\d{14}_${o}_[a-z0-9_]+$`).test(m.name));
      if (!stamped && !SHIPPED_NAME.test(m.name)) throw new Error(`migration ${m.name}: name it YYYYMMDDHHMMSS_${owners[0]}_<what> (src/kernel/migrations/index.ts)`);
    }
  }
  return orderMigrations(owned.map((o) => o.list));
}
