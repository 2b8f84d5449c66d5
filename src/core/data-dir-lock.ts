/**
 * On SQLite a data directory belongs to one Bunker process. Two servers on one DATA_DIR
 * each keep their own in-process caches (API keys, sessions, enabled services), so a key
 * revoked through one stays accepted by the other; `migrate` or `restore` under a running
 * server rewrites the database beneath it. `serve`, `migrate` and `restore` therefore hold
 * an exclusive lock on `$DATA_DIR/bunker.lock` while they run; `backup` takes none (it
 * reads a consistent snapshot of a live database). PostgreSQL deployments (DATABASE_URL)
 * run several nodes on purpose, possibly sharing DATA_DIR (objects), and take no lock.
 *
 * The lock is SQLite's own: an exclusive transaction on an empty database file, kept open.
 * On Unix that is a POSIX fcntl lock (LockFileEx on Windows), which the kernel drops when
 * the process ends however it ends, SIGKILL included, so nothing goes stale the way a PID
 * file does. Chosen over flock(2) through bun:ffi because it needs no foreign calls (no
 * libc name per platform, works the same in the compiled binary) and is the primitive
 * bunker.db itself relies on: a filesystem where SQLite can lock the database can lock
 * this. Two things to keep in mind:
 * - A bun:sqlite Database that becomes unreachable is closed by the garbage collector,
 *   which ends the transaction and frees the lock: keep the returned handle referenced
 *   for as long as the directory must stay yours.
 * - A POSIX lock belongs to the process and is dropped when the process closes ANY
 *   descriptor of the file; SQLite handles that for its own connections, so nothing else
 *   in Bunker may open bunker.lock.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { ensureWritableDir, reason, StartupError } from "./startup";

export const LOCK_FILE = "bunker.lock";

export interface DataDirLock {
  readonly path: string;
  /** Frees the lock (also freed when the process ends). */
  release(): void;
}

/**
 * Locks DATA_DIR for this process, creating the directory and the lock file when missing.
 * Throws a one-line StartupError when another process holds it; `advice` ends that line
 * (what the operator should do).
 */
export function lockDataDir(dir: string, advice = "stop it, or set another DATA_DIR"): DataDirLock {
  ensureWritableDir(dir);
  const path = join(dir, LOCK_FILE);
  let db: Database | null = null;
  try {
    db = new Database(path, { create: true, readwrite: true });
    // Fail at once instead of queueing behind the holder.
    db.run("PRAGMA busy_timeout = 0");
    // BEGIN EXCLUSIVE opens a rollback journal even though nothing is ever written: kept in
    // memory, no bunker.lock-journal is left beside the lock (OFF does not take: the pragma
    // answers "delete").
    db.run("PRAGMA journal_mode = MEMORY");
    // Held until the connection closes even if the transaction were ever ended.
    db.run("PRAGMA locking_mode = EXCLUSIVE");
    // Takes the exclusive lock now.
    db.run("BEGIN EXCLUSIVE");
  } catch (e) {
    db?.close();
    if ((e as { code?: string })?.code === "SQLITE_BUSY") {
      throw new StartupError(`DATA_DIR ${dir} is in use by another Bunker process (on SQLite a data directory belongs to one process at a time): ${advice}`);
    }
    throw new StartupError(`cannot lock DATA_DIR ${dir}: ${path}: ${reason(e)}`);
  }
  const held = db;
  let released = false;
  return {
    path,
    release() {
      if (released) return;
      released = true;
      held.close();
    },
  };
}
