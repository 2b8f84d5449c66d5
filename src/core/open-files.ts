/**
 * The open-file limit. Every connection is a file handle: at the limit, new clients are
 * refused while old ones still hold theirs. Bun already lifts the soft limit to the hard one;
 * a process allowed to (root, CAP_SYS_RESOURCE) also lifts the hard limit to the kernel's
 * ceiling (fs.nr_open), as nginx's worker_rlimit_nofile does. Elsewhere (macOS, musl, a
 * container without the capability) the limit is left as it is and only reported.
 */
import { dlopen, FFIType, ptr } from "bun:ffi";
import { readFileSync } from "node:fs";

/** Linux's resource number for open files. */
const RLIMIT_NOFILE = 7;
/** Never ask for more than this, whatever fs.nr_open says. */
const CEILING = 1 << 20;

export interface OpenFileLimit {
  /** The soft limit in force after start-up: what the process can actually open. */
  limit: number;
  /** What it was before (equal when nothing could be raised). */
  before: number;
}

/** Raises the limit where allowed; null where it cannot be read (not Linux with glibc). */
export function raiseOpenFileLimit(): OpenFileLimit | null {
  if (process.platform !== "linux") return null;
  let libc;
  try {
    libc = dlopen("libc.so.6", {
      getrlimit: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
      setrlimit: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
    });
  } catch {
    return null;
  }
  try {
    const r = new BigUint64Array(2); // struct rlimit { rlim_cur, rlim_max }
    if (libc.symbols.getrlimit(RLIMIT_NOFILE, ptr(r)) !== 0) return null;
    const before = Number(r[0]);
    const target = BigInt(Math.min(nrOpen(), CEILING));
    if (r[1] < target) {
      const want = new BigUint64Array([target, target]);
      libc.symbols.setrlimit(RLIMIT_NOFILE, ptr(want)); // EPERM without the capability: keep what we have
    }
    libc.symbols.getrlimit(RLIMIT_NOFILE, ptr(r));
    if (r[0] < r[1]) {
      r[0] = r[1] > target ? target : r[1];
      libc.symbols.setrlimit(RLIMIT_NOFILE, ptr(r));
      libc.symbols.getrlimit(RLIMIT_NOFILE, ptr(r));
    }
    return { limit: Number(r[0]), before };
  } finally {
    libc.close();
  }
}

function nrOpen(): number {
  try {
    return Number(readFileSync("/proc/sys/fs/nr_open", "utf8").trim()) || CEILING;
  } catch {
    return CEILING;
  }
}
