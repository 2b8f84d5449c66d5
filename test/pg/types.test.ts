/**
 * Representative rows through Bun.SQL on the migrated PostgreSQL schema, compared with the
 * same rows through bun:sqlite: what a store shared by both engines can rely on (and the
 * one place it cannot: BIGINT comes back as a string, or a BigInt with `bigint: true`).
 */
import { SQL } from "bun";
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Database as Db } from "bun:sqlite";
import { migratePg } from "../../src/core/store/migrate-pg";
import { MIGRATIONS } from "../../src/app";
import { rawSqlite } from "../helpers/engine";
import { type PgCluster, startPgCluster } from "../helpers/pg-cluster";

let cluster: PgCluster;
let pg: SQL;
let lite: Db;
let url: string;

const NOW_MS = 1_780_000_000_123; // 2026: past 2^31, below 2^53
const ISO = "2026-05-28T20:26:40.123Z";
const JSON_TEXT = '{"b":1,"a":[true,null],"s":"é \\u0000 \\"q\\" 😀"}'; // key order, escapes and astral chars kept as written

beforeAll(async () => {
  cluster = await startPgCluster();
  url = await cluster.createDatabase("types");
  pg = new SQL(url, { max: 2 });
  await migratePg(pg, MIGRATIONS);
  lite = rawSqlite();
  const ws = ["ws_1", "acme", "Acme", "acc_1", ISO, ISO];
  lite.query("INSERT INTO platform_workspaces (id, slug, display_name, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)").run(...ws);
  await pg`INSERT INTO platform_workspaces (id, slug, display_name, created_by, created_at, updated_at) VALUES (${ws[0]}, ${ws[1]}, ${ws[2]}, ${ws[3]}, ${ws[4]}, ${ws[5]})`;
}, 30_000);

afterAll(async () => {
  await pg?.close();
  await cluster?.stop();
});

test("epoch-ms BIGINT, 0/1 flags, JSON text and ISO timestamps round-trip unchanged", async () => {
  const row = {
    id: "ep_1", product: "social", scope_id: "ws_1", url: "https://example.com/hook", event_types: JSON_TEXT,
    enabled: 0, legacy: 1, secret_enc: "enc", prev_secret_expires_ms: NOW_MS, created_at: ISO, updated_at: ISO,
  };
  const insert = "INSERT INTO webhook_endpoints (id, product, scope_id, url, event_types, enabled, legacy, secret_enc, prev_secret_expires_ms, created_at, updated_at)";
  lite.query(`${insert} VALUES ($id, $product, $scope_id, $url, $event_types, $enabled, $legacy, $secret_enc, $prev_secret_expires_ms, $created_at, $updated_at)`).run(row);
  await pg`${pg.unsafe(insert)} VALUES (${row.id}, ${row.product}, ${row.scope_id}, ${row.url}, ${row.event_types}, ${row.enabled}, ${row.legacy}, ${row.secret_enc}, ${row.prev_secret_expires_ms}, ${row.created_at}, ${row.updated_at})`;

  const select = "SELECT id, event_types, enabled, legacy, status, consecutive_failures, prev_secret_expires_ms, first_failure_at, created_at FROM webhook_endpoints";
  const fromLite = lite.query(select).get() as Record<string, unknown>;
  const [fromPg] = await pg.unsafe(select);
  expect(fromLite).toEqual({
    id: "ep_1", event_types: JSON_TEXT, enabled: 0, legacy: 1, status: "enabled", consecutive_failures: 0,
    prev_secret_expires_ms: NOW_MS, first_failure_at: null, created_at: ISO,
  });
  // The one difference: int8 arrives as a decimal string (exact); everything else is identical.
  expect(fromPg).toEqual({ ...fromLite, prev_secret_expires_ms: String(NOW_MS) });
  expect(JSON.parse(fromPg.event_types)).toEqual(JSON.parse(JSON_TEXT));

  const asBigInt = new SQL(url, { max: 1, bigint: true });
  try {
    const [r] = await asBigInt`SELECT prev_secret_expires_ms, enabled FROM webhook_endpoints`;
    expect(r).toEqual({ prev_secret_expires_ms: BigInt(NOW_MS), enabled: 0 });
  } finally {
    await asBigInt.close();
  }
});

test("epoch-ms comparisons with a JS number parameter agree on both engines", async () => {
  const rows = [
    ["ses_old", NOW_MS - 1],
    ["ses_now", NOW_MS],
    ["ses_new", NOW_MS + 1],
  ] as const;
  lite.query("INSERT INTO platform_accounts (id, email, username, created_at, updated_at) VALUES ('acc_1', 'a@x.test', 'a', ?, ?)").run(ISO, ISO);
  await pg`INSERT INTO platform_accounts (id, email, username, created_at, updated_at) VALUES ('acc_1', 'a@x.test', 'a', ${ISO}, ${ISO})`;
  for (const [id, exp] of rows) {
    lite.query("INSERT INTO platform_sessions (id, account_id, created_at, expires_at) VALUES (?, 'acc_1', ?, ?)").run(id, ISO, exp);
    await pg`INSERT INTO platform_sessions (id, account_id, created_at, expires_at) VALUES (${id}, 'acc_1', ${ISO}, ${exp})`;
  }
  const live = "SELECT id FROM platform_sessions WHERE expires_at > ? ORDER BY expires_at";
  const fromLite = lite.query<{ id: string }, [number]>(live).all(NOW_MS).map((r) => r.id);
  const fromPg = (await pg.unsafe(live.replace("?", "$1"), [NOW_MS])).map((r: { id: string }) => r.id);
  expect(fromLite).toEqual(["ses_new"]);
  expect(fromPg).toEqual(fromLite);
});

test("ISO timestamps and ids sort in byte order on both engines (C collation)", async () => {
  const ids = ["ws_b-1", "ws_B", "ws_a_2", "ws_a-2", "ws_a;", "ws_a:", "ws_é", "ws_z"];
  for (const [i, id] of ids.entries()) {
    const at = new Date(Date.UTC(2026, 0, 1) + i * 997).toISOString();
    lite.query("INSERT INTO platform_workspaces (id, slug, display_name, created_by, created_at, updated_at) VALUES (?, ?, 'x', 'acc_1', ?, ?)").run(id, id, at, at);
    await pg`INSERT INTO platform_workspaces (id, slug, display_name, created_by, created_at, updated_at) VALUES (${id}, ${id}, 'x', 'acc_1', ${at}, ${at})`;
  }
  const q = "SELECT id FROM platform_workspaces ORDER BY id";
  const fromLite = lite.query<{ id: string }, []>(q).all().map((r) => r.id);
  expect((await pg.unsafe(q)).map((r: { id: string }) => r.id)).toEqual(fromLite);
  const byTime = "SELECT id FROM platform_workspaces WHERE created_at >= '2026-01-01T00:00:02' AND created_at < '2026-01-02' ORDER BY created_at DESC";
  const timeLite = lite.query<{ id: string }, []>(byTime).all().map((r) => r.id);
  expect(timeLite).toEqual(ids.slice(3).reverse());
  expect((await pg.unsafe(byTime)).map((r: { id: string }) => r.id)).toEqual(timeLite);
});

test("NOCASE columns (citext) fold ASCII only, as SQLite's NOCASE does", async () => {
  const insert = "INSERT INTO platform_invitations (id, workspace_id, email, role_id, token_hash, invited_by, created_at, expires_at) VALUES ($1, 'ws_1', $2, '00000000-0000-7000-8000-000000000003', $1, 'acc_1', '2026-01-01', 1)";
  const both = async (id: string, email: string) => {
    let liteErr: string | null = null;
    let pgErr: string | null = null;
    try {
      lite.query(insert.replaceAll("$1", "?1").replace("$2", "?2")).run(id, email);
    } catch (e) {
      liteErr = (e as Error).message;
    }
    try {
      await pg.unsafe(insert, [id, email]);
    } catch (e) {
      pgErr = (e as Error).message;
    }
    return { lite: liteErr !== null, pg: pgErr !== null };
  };
  // platform_invitations_open: one open invitation per (workspace, email), case-insensitive.
  expect(await both("inv_1", "Bob@Example.test")).toEqual({ lite: false, pg: false });
  expect(await both("inv_2", "bob@example.TEST")).toEqual({ lite: true, pg: true });
  expect(await both("inv_3", "élan@example.test")).toEqual({ lite: false, pg: false });
  expect(await both("inv_4", "Élan@example.test")).toEqual({ lite: false, pg: false }); // non-ASCII is not folded

  const find = "SELECT id FROM platform_invitations WHERE email = $1 ORDER BY id";
  for (const probe of ["BOB@EXAMPLE.TEST", "ÉLAN@EXAMPLE.TEST", "élan@EXAMPLE.test"]) {
    const fromLite = lite.query<{ id: string }, [string]>(find.replace("$1", "?")).all(probe).map((r) => r.id);
    expect((await pg.unsafe(find, [probe])).map((r: { id: string }) => r.id)).toEqual(fromLite);
  }
});

test("identity ids of core_ratelimit_hits are assigned like SQLite rowids", async () => {
  for (let i = 0; i < 3; i++) {
    lite.query("INSERT INTO core_ratelimit_hits (key, at_ms, expires_ms) VALUES ('k', ?, ?)").run(NOW_MS + i, NOW_MS + 60_000);
    await pg`INSERT INTO core_ratelimit_hits (key, at_ms, expires_ms) VALUES ('k', ${NOW_MS + i}, ${NOW_MS + 60_000})`;
  }
  const q = "SELECT id, at_ms FROM core_ratelimit_hits ORDER BY id";
  const fromLite = lite.query<{ id: number; at_ms: number }, []>(q).all();
  const fromPg = (await pg.unsafe(q)).map((r: { id: string; at_ms: string }) => ({ id: Number(r.id), at_ms: Number(r.at_ms) }));
  expect(fromLite).toEqual([1, 2, 3].map((id, i) => ({ id, at_ms: NOW_MS + i })));
  expect(fromPg).toEqual(fromLite);
});
