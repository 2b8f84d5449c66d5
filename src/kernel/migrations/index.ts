/**
 * Every migration, in order, imported as text so `bun build --compile` embeds them in
 * the binary. Append-only: never edit a file that has shipped; add a new one.
 * test/core/migrations.test.ts checks that every .sql file in this folder is listed.
 *
 * PostgreSQL runs the same list (PG_MIGRATIONS): a file whose SQL is not portable has a
 * variant of the same name in pg/ (types such as citext and BIGINT, functions); every
 * other file is shared as is. test/pg/ checks that both engines end with the same schema.
 * The pg/ files are whole copies of shipped (frozen) files, so they never drift. New files
 * should need no variant: write epoch-ms columns as BIGINT (SQLite gives it INTEGER
 * affinity, like INTEGER), keep ISO timestamps as TEXT set by the application, and leave
 * case-insensitive columns, upserts and date functions to a pg/ variant only when unavoidable.
 */
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
import m0030 from "./0030_auth.sql" with { type: "text" };
import m0031 from "./0031_auth_oauth.sql" with { type: "text" };
import m0033 from "./0033_platform_member_reads.sql" with { type: "text" };
import m0040 from "./0040_social_communities.sql" with { type: "text" };
import m0041 from "./0041_social_actors.sql" with { type: "text" };
import m0042 from "./0042_social_graph.sql" with { type: "text" };
import m0043 from "./0043_social_hashtags.sql" with { type: "text" };
import m0044 from "./0044_social_conversations.sql" with { type: "text" };
import m0045 from "./0045_social_conversation_seq.sql" with { type: "text" };
import m0046 from "./0046_social_posts.sql" with { type: "text" };
import m0047 from "./0047_social_moderation.sql" with { type: "text" };
import m0048 from "./0048_social_hides.sql" with { type: "text" };
import m0050 from "./0050_mail_domains.sql" with { type: "text" };
import m0051 from "./0051_mail_content.sql" with { type: "text" };
import m0052 from "./0052_mail_messages.sql" with { type: "text" };
import m0053 from "./0053_mail_sending.sql" with { type: "text" };
import m0054 from "./0054_mail_mailboxes.sql" with { type: "text" };
import m0055 from "./0055_mail_handover.sql" with { type: "text" };
import m0056 from "./0056_mail_sandbox.sql" with { type: "text" };
import m0060 from "./0060_tack_board.sql" with { type: "text" };
import m0061 from "./0061_tack_webhook_scope.sql" with { type: "text" };
import m0070 from "./0070_waitlist.sql" with { type: "text" };
import m0071 from "./0071_waitlist_counters.sql" with { type: "text" };
import m0072 from "./0072_waitlist_counters_to_core.sql" with { type: "text" };
import m0080 from "./0080_trawl_jobs.sql" with { type: "text" };
import m0081 from "./0081_trawl_claim_indexes.sql" with { type: "text" };
import m0095 from "./0095_member_service_reads.sql" with { type: "text" };
import m0096 from "./0096_waitlist_invite_outcome.sql" with { type: "text" };
import pg0002 from "./pg/0002_core_ratelimit.sql" with { type: "text" };
import pg0003 from "./pg/0003_core_idempotency.sql" with { type: "text" };
import pg0010 from "./pg/0010_platform_accounts.sql" with { type: "text" };
import pg0011 from "./pg/0011_platform_workspaces.sql" with { type: "text" };
import pg0012 from "./pg/0012_platform_keys_audit.sql" with { type: "text" };
import pg0014 from "./pg/0014_platform_identities.sql" with { type: "text" };
import pg0020 from "./pg/0020_webhooks.sql" with { type: "text" };
import pg0030 from "./pg/0030_auth.sql" with { type: "text" };
import pg0031 from "./pg/0031_auth_oauth.sql" with { type: "text" };
import pg0033 from "./pg/0033_platform_member_reads.sql" with { type: "text" };
import pg0060 from "./pg/0060_tack_board.sql" with { type: "text" };

export interface Migration {
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [
  { name: "0001_core_base", sql: m0001 },
  { name: "0002_core_ratelimit", sql: m0002 },
  { name: "0003_core_idempotency", sql: m0003 },
  { name: "0004_core_events", sql: m0004 },
  { name: "0005_core_mail_outbox", sql: m0005 },
  { name: "0006_core_key_check", sql: m0006 },
  { name: "0007_core_job_ticks", sql: m0007 },
  { name: "0008_core_ratelimit_windows", sql: m0008 },
  { name: "0010_platform_accounts", sql: m0010 },
  { name: "0011_platform_workspaces", sql: m0011 },
  { name: "0012_platform_keys_audit", sql: m0012 },
  { name: "0013_platform_members", sql: m0013 },
  { name: "0014_platform_identities", sql: m0014 },
  { name: "0015_platform_mfa", sql: m0015 },
  { name: "0020_webhooks", sql: m0020 },
  { name: "0021_webhooks_engine", sql: m0021 },
  { name: "0022_webhooks_status", sql: m0022 },
  { name: "0023_webhooks_lease_owner", sql: m0023 },
  { name: "0030_auth", sql: m0030 },
  { name: "0031_auth_oauth", sql: m0031 },
  { name: "0033_platform_member_reads", sql: m0033 },
  { name: "0040_social_communities", sql: m0040 },
  { name: "0041_social_actors", sql: m0041 },
  { name: "0042_social_graph", sql: m0042 },
  { name: "0043_social_hashtags", sql: m0043 },
  { name: "0044_social_conversations", sql: m0044 },
  { name: "0045_social_conversation_seq", sql: m0045 },
  { name: "0046_social_posts", sql: m0046 },
  { name: "0047_social_moderation", sql: m0047 },
  { name: "0048_social_hides", sql: m0048 },
  { name: "0050_mail_domains", sql: m0050 },
  { name: "0051_mail_content", sql: m0051 },
  { name: "0052_mail_messages", sql: m0052 },
  { name: "0053_mail_sending", sql: m0053 },
  { name: "0054_mail_mailboxes", sql: m0054 },
  { name: "0055_mail_handover", sql: m0055 },
  { name: "0056_mail_sandbox", sql: m0056 },
  { name: "0060_tack_board", sql: m0060 },
  { name: "0061_tack_webhook_scope", sql: m0061 },
  { name: "0070_waitlist", sql: m0070 },
  { name: "0071_waitlist_counters", sql: m0071 },
  { name: "0072_waitlist_counters_to_core", sql: m0072 },
  { name: "0080_trawl_jobs", sql: m0080 },
  { name: "0081_trawl_claim_indexes", sql: m0081 },
  { name: "0095_member_service_reads", sql: m0095 },
  { name: "0096_waitlist_invite_outcome", sql: m0096 },
];

/** PostgreSQL variants, by migration name: only the files whose SQL is not portable. */
export const PG_VARIANTS: Readonly<Record<string, string>> = {
  "0002_core_ratelimit": pg0002,
  "0003_core_idempotency": pg0003,
  "0010_platform_accounts": pg0010,
  "0011_platform_workspaces": pg0011,
  "0012_platform_keys_audit": pg0012,
  "0014_platform_identities": pg0014,
  "0020_webhooks": pg0020,
  "0030_auth": pg0030,
  "0031_auth_oauth": pg0031,
  "0033_platform_member_reads": pg0033,
  "0060_tack_board": pg0060,
};

/** The PostgreSQL list: same names and order as MIGRATIONS, each file's pg/ variant when it has one. */
export const PG_MIGRATIONS: Migration[] = MIGRATIONS.map((m) => ({ name: m.name, sql: PG_VARIANTS[m.name] ?? m.sql }));
