/** A fresh, migrated SQLite database in its own temp folder, for unit tests of core modules. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate, openDb } from "../../src/core/db";

export function freshDb() {
  const dir = mkdtempSync(join(tmpdir(), "bunker-test-"));
  const path = join(dir, "bunker.db");
  const db = openDb(path);
  migrate(db);
  return { db, dir, path };
}
