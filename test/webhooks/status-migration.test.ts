/**
 * Migration 0022: endpoints paused before the status fix (status 'disabled') move to the
 * spec's model (enabled = 0, status enabled | auto_disabled), on a database that has every
 * earlier migration and real rows.
 */
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MIGRATIONS } from "../../src/app";
import { migrateSqlite as migrate, openSqliteFile as openDb } from "../../src/core/store/sqlite";

test("0022 moves paused rows to enabled = 0 and keeps an auto-disable that preceded the pause", () => {
  const db = openDb(join(mkdtempSync(join(tmpdir(), "bunker-m0022-")), "bunker.db"));
  // The database as it was before 0022: every earlier migration applied and recorded.
  db.exec("CREATE TABLE core_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)");
  for (const m of MIGRATIONS.filter((m) => m.name < "0022")) {
    db.exec(m.sql);
    db.query("INSERT INTO core_migrations (name, applied_at) VALUES (?, ?)").run(m.name, "2026-01-01T00:00:00.000Z");
  }
  const insert = db.query(
    `INSERT INTO webhook_endpoints (id, product, scope_id, url, enabled, status, disabled_reason, secret_enc, auto_disabled_at, consecutive_failures, created_at, updated_at)
     VALUES (?, 'mail', 'ws_1', 'https://example.com', ?, ?, ?, 'x', ?, ?, 't', 't')`,
  );
  insert.run("ep_paused", 0, "disabled", "manual", null, 3);
  insert.run("ep_auto_then_paused", 0, "disabled", "manual", "2026-05-01T00:00:00.000Z", 20);
  insert.run("ep_auto", 1, "auto_disabled", "failing", "2026-05-02T00:00:00.000Z", 20);
  insert.run("ep_on", 1, "enabled", null, null, 0);

  expect(migrate(db, MIGRATIONS)).toContain("0022_webhooks_status");
  const rows = db.query("SELECT id, enabled, status, disabled_reason, consecutive_failures FROM webhook_endpoints ORDER BY id").all();
  expect(rows).toEqual([
    { id: "ep_auto", enabled: 1, status: "auto_disabled", disabled_reason: "failing", consecutive_failures: 20 },
    { id: "ep_auto_then_paused", enabled: 0, status: "auto_disabled", disabled_reason: "failing", consecutive_failures: 20 },
    { id: "ep_on", enabled: 1, status: "enabled", disabled_reason: null, consecutive_failures: 0 },
    { id: "ep_paused", enabled: 0, status: "enabled", disabled_reason: null, consecutive_failures: 3 },
  ]);
  db.close();
});
