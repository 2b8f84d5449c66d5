/**
 * What a migration is to the two engines, and the one order they run a schema in. The
 * files live with their owner (src/kernel/migrations/, src/services/<name>/migrations/),
 * each folder's index.ts imports them as text; the kernel gathers them
 * (kernel/migrations: schemaOf) and the engines apply the result (sqlite.ts, migrate-pg.ts).
 */

export interface Migration {
  /** The file name without .sql: recorded in core_migrations once applied, so never renamed. */
  name: string;
  sql: string;
  /** The PostgreSQL variant (the folder's pg/<name>.sql), for SQL that is not portable. */
  pg?: string;
}

/** The SQL an engine runs for m. */
export const sqlFor = (m: Migration, engine: "sqlite" | "postgres"): string => (engine === "postgres" ? (m.pg ?? m.sql) : m.sql);

/**
 * Several owners' lists as one, ordered by name: the version each name starts with (a
 * shipped 4-digit number, then 14-digit timestamps, which sort after every one of them)
 * decides, compared in code-unit order so no locale changes it. Two owners declaring the
 * same name would record one as applied for both: refused.
 */
export function orderMigrations(lists: readonly (readonly Migration[])[]): Migration[] {
  const all = lists.flat();
  const seen = new Set<string>();
  for (const m of all) {
    if (seen.has(m.name)) throw new Error(`two migrations are named ${m.name}`);
    seen.add(m.name);
  }
  return all.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
