/** Opaque cursors (base64url JSON) and limit parsing shared by every list route. */
import { badRequest } from "./errors";

export interface Page<T> {
  data: T[];
  pagination: { next_cursor: string | null; has_more: boolean };
}

export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

export function decodeCursor<T = Record<string, unknown>>(cursor: string | undefined | null): T | null {
  if (cursor === undefined || cursor === null || cursor === "") return null;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error("charset");
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (v === null || typeof v !== "object") throw new Error("shape");
    return v as T;
  } catch {
    throw badRequest("Malformed cursor", [{ field: "cursor", reason: "not a cursor issued by this API" }], "INVALID_CURSOR");
  }
}

/** Parses a limit given as string or number; default when absent, 400 when not an integer in [1, max]. */
export function parseLimit(raw: unknown, def = 20, max = 100): number {
  if (raw === undefined || raw === null || raw === "") return def;
  const n = typeof raw === "number" ? raw : Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw badRequest(`limit must be an integer from 1 to ${max}`, [{ field: "limit", reason: `integer 1-${max}` }]);
  }
  return n;
}

/**
 * Builds a page from rows fetched with LIMIT limit+1 (so has_more needs no COUNT query).
 * `cursorOf` turns the last returned row into the keyset position for the next page.
 */
export function buildPage<R, T>(rows: R[], limit: number, cursorOf: (row: R) => unknown, map: (row: R) => T): Page<T> {
  const has_more = rows.length > limit;
  const slice = has_more ? rows.slice(0, limit) : rows;
  return {
    data: slice.map(map),
    pagination: { next_cursor: has_more ? encodeCursor(cursorOf(slice[slice.length - 1])) : null, has_more },
  };
}
