/**
 * Shared pieces of the community's customer-backend lane (/social/v1/communities/{id}/...):
 * list paging with opaque keyset cursors, id lists, expand, per-item batch errors. It builds
 * on no feature: the community and actor lookups every feature starts with are actors/lane.ts.
 */
import { ApiError, badRequest, invalidField } from "../../../core/errors";
import { isUuid } from "../../../core/ids";
import { buildPage, decodeCursor, parseLimit, type Page } from "../../../core/pagination";
import type { Keyset } from "./keyset";

export const PAGE_DEFAULT = 50;
export const PAGE_MAX = 200;
export const IDS_MAX = 100;
export const BATCH_MAX = 200;

export type Action = "social.list" | "social.read" | "social.create" | "social.update" | "social.delete";

export const badCursor = (reason = "not a cursor issued by this API; restart from the first page") =>
  badRequest("Malformed cursor", [{ field: "cursor", reason }], "INVALID_CURSOR");

export type { Keyset };

/** limit (default 50, 1-200) and the decoded keyset cursor; anything but {k, id} strings (e.g. a legacy raw id) is 400 INVALID_CURSOR. */
export function pageArgs(q: { limit?: unknown; cursor?: string }): { limit: number; after: Keyset | null } {
  const limit = parseLimit(q.limit, PAGE_DEFAULT, PAGE_MAX);
  const c = decodeCursor<{ k?: unknown; id?: unknown }>(q.cursor);
  if (c && (typeof c.k !== "string" || typeof c.id !== "string")) throw badCursor();
  return { limit, after: c ? { k: c.k as string, id: c.id as string } : null };
}

/** A page from rows fetched with limit + 1; `key` gives the row's keyset position. */
export function page<R, T>(rows: R[], limit: number, key: (r: R) => Keyset, map: (r: R) => T): Page<T> {
  return buildPage(rows, limit, key, map);
}

/** Comma-separated uuids (max 100, de-duplicated, request order kept). Non-uuids are 400. */
export function idList(raw: string | undefined, field: string, required: boolean): string[] | null {
  if (raw === undefined || raw === "") {
    if (required) throw invalidField(field, "required: comma-separated actor uuids");
    return null;
  }
  const ids = [...new Set(raw.split(",").map((s) => s.trim().toLowerCase()).filter((s) => s !== ""))];
  if (ids.length === 0) throw invalidField(field, "at least one actor uuid");
  if (ids.length > IDS_MAX) throw invalidField(field, `at most ${IDS_MAX} ids`);
  for (const id of ids) if (!isUuid(id)) throw invalidField(field, `"${id}" is not a uuid`);
  return ids;
}

/** expand: absent, or exactly the one value the route supports; anything else is 400 INVALID_EXPAND. */
export function expandArg(raw: string | undefined, allowed: string): boolean {
  if (raw === undefined || raw === "") return false;
  const parts = raw.split(",").map((s) => s.trim()).filter(Boolean);
  for (const p of parts) if (p !== allowed) throw badRequest(`Unsupported expand value "${p}"; supported: ${allowed}`, [{ field: "expand", reason: `only ${allowed}` }], "INVALID_EXPAND");
  return parts.length > 0;
}

/** A batch envelope: an array of 1-200 items, else 400. */
export function batchItems(v: unknown, field: string): unknown[] {
  if (!Array.isArray(v)) throw invalidField(field, "required: an array of 1-200 items");
  if (v.length < 1 || v.length > BATCH_MAX) throw invalidField(field, `1-${BATCH_MAX} items (got ${v.length})`);
  return v;
}

export interface ItemError {
  status: number;
  code: string;
  message: string;
}

/** The error of one failed batch item: ApiErrors keep their status and code; anything else is a 500 item (the other items still run). */
export function itemError(e: unknown): ItemError {
  if (e instanceof ApiError) return { status: e.status, code: e.code, message: e.message };
  return { status: 500, code: "INTERNAL_ERROR", message: "The item could not be written" };
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** An optional JSON-object field (payload, metadata); stored as text. */
export function jsonObject(v: unknown, field: string, maxBytes = 16_384): string {
  if (v === undefined || v === null) return "{}";
  if (!isObject(v)) throw invalidField(field, "must be an object");
  const s = JSON.stringify(v);
  if (s.length > maxBytes) throw invalidField(field, `at most ${maxBytes} bytes of JSON`);
  return s;
}
