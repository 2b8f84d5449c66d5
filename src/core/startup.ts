/**
 * Start-up refusals: problems an operator must fix before Bunker may run (an unusable
 * DATA_DIR, a DATA_DIR another process holds (data-dir-lock.ts), a master key that does
 * not match the database, a port already taken). The CLI prints the message as one line
 * and exits 1, with no stack trace.
 */
import { mkdirSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export class StartupError extends Error {}

/** One line from a Node-style error: "EACCES: permission denied, mkdir '/x'" -> that text. */
export const reason = (e: unknown) => String((e as Error)?.message ?? e).split("\n")[0];

/**
 * Creates DATA_DIR when missing and proves it writable by writing a probe file, so a
 * read-only mount or a path under a file fails here, in words, instead of deep inside SQLite.
 */
export function ensureWritableDir(dir: string, name = "DATA_DIR"): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const probe = join(dir, `.write-test-${process.pid}`);
    writeFileSync(probe, "");
    unlinkSync(probe);
  } catch (e) {
    throw new StartupError(`${name} ${dir} is not a writable directory (${reason(e)})`);
  }
}
