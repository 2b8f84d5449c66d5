/**
 * The card board's settings: the spec's per-API-key requests per minute (board/guard.ts),
 * raised (or 0: off) for benchmarks and tests (docs/operations.md "Configuration").
 */
import { int, type SettingValues } from "../../settings";

export const TACK_SETTINGS = {
  writes: int("TACK_RATE_WRITES", 200, 0, 10_000_000, "Write requests per minute per API key; 0: no limit"),
  reads: int("TACK_RATE_READS", 600, 0, 10_000_000, "Read requests per minute per API key; 0: no limit"),
  batch: int("TACK_RATE_BATCH", 30, 0, 10_000_000, "Batch operations per minute per API key; 0: no limit"),
};

/** The per-minute limit of each rate class. */
export type TackRateLimits = SettingValues<typeof TACK_SETTINGS>;
