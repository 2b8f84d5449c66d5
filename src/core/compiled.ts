/**
 * Whether this code runs inside a `bun build --compile` executable: its modules then live in
 * Bun's embedded file system ("/$bunfs/..." on Unix, "B:/~BUN/..." on Windows) instead of on disk.
 */
export const RUNS_COMPILED = import.meta.path.startsWith("/$bunfs/") || /^[A-Za-z]:[\\/]~BUN[\\/]/.test(import.meta.path);
