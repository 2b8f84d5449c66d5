/**
 * Migrations live with their owner (src/kernel/migrations/, src/services/<name>/migrations/),
 * each folder's index.ts lists its files, and the engines run the union in one order. What
 * shipped may never change: core_migrations of every existing database records these names.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { MIGRATIONS, SERVICE_MODULES } from "../../src/app";
import { KERNEL_MIGRATIONS, schemaOf } from "../../src/kernel/migrations";
import type { Migration } from "../../src/core/store/migrations";
import { migrateSqlite, openSqliteFile, SqliteDb } from "../../src/core/store/sqlite";
import { freshDb } from "../helpers/db";

const SRC = join(import.meta.dir, "../../src");

/**
 * The files shipped before migrations moved to their owners (0001-0096), in their order, with
 * the first 16 hex digits of the SHA-256 of their SQL (and of their pg/ variant): an existing
 * data dir has exactly these recorded, so renaming, reordering or editing one is refused.
 */
type Shipped = [name: string, sha: string, pgSha?: string];
const SHIPPED: Shipped[] = [
  ["0001_core_base", "5d82219b1930e1e1"],
  ["0002_core_ratelimit", "7f85440875c4628b", "a9d7ee3e31fdafad"],
  ["0003_core_idempotency", "faba80bc8454e4a4", "fabfd8038b242174"],
  ["0004_core_events", "aa21e5d0f4882a83"],
  ["0005_core_mail_outbox", "6196a27e324822dd"],
  ["0006_core_key_check", "cb68dda2881bed1e"],
  ["0007_core_job_ticks", "f94dca0e07888f4d"],
  ["0008_core_ratelimit_windows", "cf7509a4b3134f1b"],
  ["0010_platform_accounts", "f93607517731d92d", "b28eb0d7c6fefe5f"],
  ["0011_platform_workspaces", "05fd21c2356d1b3b", "01648ab463465798"],
  ["0012_platform_keys_audit", "46497ff636b723eb", "4009f6609e8cbc47"],
  ["0013_platform_members", "8044df9e36190f22"],
  ["0014_platform_identities", "3bcde80ced464af4", "ffb764f17ef2e6e5"],
  ["0015_platform_mfa", "3b96c038cbf0e060"],
  ["0020_webhooks", "9474424c360163b5", "42205d7dbf15769c"],
  ["0021_webhooks_engine", "d09d58ab86d85615"],
  ["0022_webhooks_status", "a65f4ab4c992b484"],
  ["0023_webhooks_lease_owner", "8926f5ca07d3e2e4"],
  ["0030_auth", "f4d573c09b3e42b0", "284b0bfebaa7fc24"],
  ["0031_auth_oauth", "51a793a2e7f8ba95", "d58200691196a0f8"],
  ["0033_platform_member_reads", "448eb3635d399299", "ba4f33d5ebc49004"],
  ["0040_social_communities", "01dbcd6e69cd7c12"],
  ["0041_social_actors", "141ddc274c6efb97"],
  ["0042_social_graph", "f5342804f722041d"],
  ["0043_social_hashtags", "903bc74c0c2ab703"],
  ["0044_social_conversations", "4fa5aa0bab7548f6"],
  ["0045_social_conversation_seq", "2a867dadef4e4207"],
  ["0046_social_posts", "42e3499254e29045"],
  ["0047_social_moderation", "839e9252117d45c7"],
  ["0048_social_hides", "0c5a5cb110320d4b"],
  ["0050_mail_domains", "a403a1fbecf631cf"],
  ["0051_mail_content", "2ce30ffad88b7150"],
  ["0052_mail_messages", "fe11b9ca2bd1ad83"],
  ["0053_mail_sending", "947acfb45aab99b1"],
  ["0054_mail_mailboxes", "312fcc92ac99c870"],
  ["0055_mail_handover", "ff5c8f1c6f0fde21"],
  ["0056_mail_sandbox", "5cf6cc4d67970226"],
  ["0060_tack_board", "8c712a2e0f8d4d37", "0bba29e6efb5796d"],
  ["0061_tack_webhook_scope", "f43ed675dc3e369b"],
  ["0070_waitlist", "6cc8f7496563dfd9"],
  ["0071_waitlist_counters", "dd9b8755a52d25dc"],
  ["0072_waitlist_counters_to_core", "fc0d80020205f74f"],
  ["0080_trawl_jobs", "d3aa7073cd012fb6"],
  ["0081_trawl_claim_indexes", "b0d817447e4a3bc1"],
  ["0095_member_service_reads", "1e2a8ec825355bec"],
  ["0096_waitlist_invite_outcome", "e357a922eaaf672c"],
];

const sha = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex").slice(0, 16);

/** Every migrations folder under src/, with the list its owner declares. */
function folders(): { dir: string; list: readonly Migration[] }[] {
  const dirs = new Set([...new Bun.Glob("**/migrations/**/*.sql").scanSync(SRC)].map((f) => {
    const dir = dirname(f);
    return basename(dir) === "pg" ? dirname(dir) : dir;
  }));
  return [...dirs].sort().map((dir) => {
    if (dir === "kernel/migrations") return { dir, list: KERNEL_MIGRATIONS };
    const owner = SERVICE_MODULES.find((m) => dir === `services/${m.name}/migrations`);
    if (!owner) throw new Error(`src/${dir}: no module declares this folder (kernel/migrations or services/<module name>/migrations)`);
    return { dir, list: owner.migrations ?? [] };
  });
}

const sqlFiles = (dir: string) => readdirSync(join(SRC, dir)).filter((f) => f.endsWith(".sql")).map((f) => f.slice(0, -4)).sort();

test("every .sql file of every migrations folder is listed by its owner, in order, exactly once, with its own text", async () => {
  const seen = folders();
  expect(seen.map((f) => f.dir)).toContain("kernel/migrations");
  for (const { dir, list } of seen) {
    expect({ dir, names: list.map((m) => m.name) }).toEqual({ dir, names: sqlFiles(dir) });
    let pgFiles: string[] = [];
    try {
      pgFiles = sqlFiles(join(dir, "pg"));
    } catch {}
    expect({ dir, pg: list.filter((m) => m.pg !== undefined).map((m) => m.name) }).toEqual({ dir, pg: pgFiles });
    for (const m of list) {
      expect(m.sql).toBe(await Bun.file(join(SRC, dir, `${m.name}.sql`)).text());
      if (m.pg !== undefined) expect(m.pg).toBe(await Bun.file(join(SRC, dir, "pg", `${m.name}.sql`)).text());
    }
  }
  // The app runs every folder's list, and nothing else.
  expect(MIGRATIONS.map((m) => m.name).sort()).toEqual(seen.flatMap((f) => f.list.map((m) => m.name)).sort());
});

test("the shipped migrations keep their names, order and text; every later one is a timestamped file", () => {
  const shipped = MIGRATIONS.filter((m) => /^\d{4}_/.test(m.name));
  expect(shipped.map((m): Shipped => (m.pg === undefined ? [m.name, sha(m.sql)] : [m.name, sha(m.sql), sha(m.pg)]))).toEqual(SHIPPED);
  expect(MIGRATIONS.slice(0, SHIPPED.length).map((m) => m.name)).toEqual(SHIPPED.map(([name]) => name));
  for (const m of MIGRATIONS.slice(SHIPPED.length)) expect(m.name).toMatch(/^\d{14}_[a-z0-9]+_[a-z0-9_]+$/);
});

test("a new module's timestamped migration runs after every shipped one; a data dir of the previous release applies only it", () => {
  const previous = openSqliteFile(join(mkdtempSync(join(tmpdir(), "bunker-test-")), "bunker.db"));
  try {
    // The previous release's data dir: the shipped set applied and recorded.
    const shipped = MIGRATIONS.filter((m) => SHIPPED.some(([name]) => name === m.name));
    expect(migrateSqlite(previous, shipped)).toEqual(SHIPPED.map(([name]) => name));
    const probe = { name: "probe", migrations: [{ name: "20270101120000_probe_notes", sql: "CREATE TABLE probe_notes (id TEXT PRIMARY KEY)" }] };
    const schema = schemaOf([...SERVICE_MODULES, probe]);
    expect(schema.at(-1)?.name).toBe("20270101120000_probe_notes");
    expect(migrateSqlite(previous, schema)).toEqual([...MIGRATIONS.slice(SHIPPED.length).map((m) => m.name), "20270101120000_probe_notes"]);
    expect(migrateSqlite(previous, schema)).toEqual([]);
  } finally {
    previous.close();
  }
});

test("schemaOf refuses a new file without its timestamp and owner, and two files of one name", () => {
  const mod = (name: string, ...names: string[]) => ({ name, migrations: names.map((n) => ({ name: n, sql: "" })) });
  expect(() => schemaOf([mod("probe", "probe_notes")])).toThrow("migration probe_notes: name it YYYYMMDDHHMMSS_probe_<what>");
  expect(() => schemaOf([mod("probe", "20270101120000_mail_notes")])).toThrow("migration 20270101120000_mail_notes: name it YYYYMMDDHHMMSS_probe_<what>");
  expect(() => schemaOf([mod("probe", "2027010112_probe_notes")])).toThrow("name it YYYYMMDDHHMMSS_probe_<what>");
  expect(() => schemaOf([mod("probe", "20270101120000_probe_a"), mod("other", "20270101120000_probe_a")])).toThrow("migration 20270101120000_probe_a: name it YYYYMMDDHHMMSS_other_<what>");
  expect(() => schemaOf([mod("probe", "20270101120000_probe_a", "20270101120000_probe_a")])).toThrow("two migrations are named 20270101120000_probe_a");
  expect(schemaOf([mod("probe", "20270101120001_probe_b", "20270101120000_probe_a")]).slice(-2).map((m) => m.name)).toEqual(["20270101120000_probe_a", "20270101120001_probe_b"]);
});

test("migrations apply to an empty SQLite database and are idempotent", async () => {
  const db = new SqliteDb(join(mkdtempSync(join(tmpdir(), "bunker-test-")), "bunker.db"), MIGRATIONS);
  try {
    expect(db.migrated).toEqual(MIGRATIONS.map((m) => m.name)); // the open applied all
    expect(migrateSqlite(db.writer, MIGRATIONS)).toEqual([]); // and a second run applies none
    const names = (await db.all<{ name: string }>("SELECT name FROM core_migrations ORDER BY name")).map((r) => r.name);
    expect(names).toEqual(MIGRATIONS.map((m) => m.name));
    expect(db.writer.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()?.journal_mode).toBe("wal");
    expect(db.writer.query<{ foreign_keys: number }, []>("PRAGMA foreign_keys").get()?.foreign_keys).toBe(1);
  } finally {
    await db.close();
  }
});

test("the suite's database has every migration recorded", async () => {
  const { db } = await freshDb();
  const names = (await db.all<{ name: string }>("SELECT name FROM core_migrations ORDER BY name")).map((r) => r.name);
  expect(names).toEqual(MIGRATIONS.map((m) => m.name));
  await db.close();
});
