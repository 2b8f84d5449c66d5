/**
 * Input checks of the card board. A Checks collects every bad field of one request and
 * throws one 400 VALIDATION_ERROR listing them all (details [{field, reason}]).
 */
import { ApiError, type ErrorDetail } from "../../../core/errors";

export const NAME_RE = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
export const NAME_RULE = "a slug: 1-64 of a-z, 0-9 and '-', starting and ending with a letter or digit";
export const DISPLAY_MAX = 200;
export const TITLE_MAX = 500;
export const BODY_MAX = 50_000;
export const COMMENT_MAX = 10_000;
export const METADATA_MAX_BYTES = 16 * 1024;
export const ASSIGNEES_MAX = 20;
export const LABELS_MAX = 20;
export const LISTS_MAX = 50;
export const PRIORITIES = ["urgent", "high", "medium", "low", "none"] as const;
export type Priority = (typeof PRIORITIES)[number];
const USER_RE = /^usr_[A-Za-z0-9_-]{1,64}$/;
const COLOR_RE = /^#[0-9a-fA-F]{6}$/;
const ISO_RE = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,6})?)?(Z|[+-]\d\d:\d\d)$/;

export class Checks {
  readonly details: ErrorDetail[] = [];

  fail(field: string, reason: string): undefined {
    this.details.push({ field, reason });
    return undefined;
  }

  /** Throws the collected problems, if any. */
  done(): void {
    const e = this.error();
    if (e) throw e;
  }

  /** The 400 VALIDATION_ERROR listing the collected problems; undefined without any. */
  error(): ApiError | undefined {
    if (!this.details.length) return undefined;
    const fields = [...new Set(this.details.map((d) => d.field))].join(", ");
    return new ApiError(400, "VALIDATION_ERROR", `Invalid ${fields}`, this.details);
  }

  name(field: string, v: unknown): string | undefined {
    if (typeof v !== "string" || !NAME_RE.test(v)) return this.fail(field, NAME_RULE);
    return v;
  }

  text(field: string, v: unknown, min: number, max: number): string | undefined {
    if (typeof v !== "string") return this.fail(field, "must be a string");
    const n = [...v].length;
    if (n < min || n > max) return this.fail(field, min > 0 ? `${min}-${max} characters` : `at most ${max} characters`);
    return v;
  }

  displayName(field: string, v: unknown): string | undefined {
    const s = this.text(field, v, 1, DISPLAY_MAX);
    if (s !== undefined && !s.trim()) return this.fail(field, "must not be blank");
    return s;
  }

  /** A JSON object of at most 16 KB, returned serialised. */
  metadata(field: string, v: unknown): string | undefined {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return this.fail(field, "must be an object");
    const json = JSON.stringify(v);
    if (Buffer.byteLength(json) > METADATA_MAX_BYTES) return this.fail(field, `at most ${METADATA_MAX_BYTES} bytes as JSON`);
    return json;
  }

  color(field: string, v: unknown): string | undefined {
    if (typeof v !== "string" || !COLOR_RE.test(v)) return this.fail(field, "a color #RRGGBB");
    return v.toLowerCase();
  }

  priority(field: string, v: unknown): Priority | undefined {
    if (!PRIORITIES.includes(v as Priority)) return this.fail(field, `one of ${PRIORITIES.join(", ")}`);
    return v as Priority;
  }

  /** usr_ ids, duplicates dropped, order kept. */
  assignees(field: string, v: unknown): string[] | undefined {
    if (!Array.isArray(v)) return this.fail(field, "must be an array of user ids");
    if (v.length > ASSIGNEES_MAX) return this.fail(field, `at most ${ASSIGNEES_MAX} assignees`);
    let ok = true;
    v.forEach((u, i) => {
      if (typeof u !== "string" || !USER_RE.test(u)) ok = !!this.fail(`${field}[${i}]`, "a user id usr_...");
    });
    return ok ? [...new Set(v as string[])] : undefined;
  }

  /** Label names (checked against the workspace's labels later). */
  labels(field: string, v: unknown): string[] | undefined {
    if (!Array.isArray(v)) return this.fail(field, "must be an array of label names");
    if (v.length > LABELS_MAX) return this.fail(field, `at most ${LABELS_MAX} labels`);
    if (v.some((l) => typeof l !== "string")) return this.fail(field, "label names are strings");
    return [...new Set(v as string[])];
  }

  /** ISO 8601 date-time (normalised to UTC) or null. */
  dateTime(field: string, v: unknown): string | null | undefined {
    if (v === null) return null;
    if (typeof v !== "string" || !ISO_RE.test(v) || !Number.isFinite(Date.parse(v))) return this.fail(field, "an ISO 8601 date-time, e.g. 2026-11-15T17:00:00Z, or null");
    return new Date(Date.parse(v)).toISOString();
  }

  position(field: string, v: unknown): number | undefined {
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0) return this.fail(field, "a 0-based index (integer 0 or more); larger values mean the end");
    return v;
  }
}

/** Offset paging of the card board: limit 1-100 (default 50), offset 0+. */
export function offsetPage(q: { limit?: unknown; offset?: unknown }): { limit: number; offset: number } {
  const c = new Checks();
  let limit = 50;
  let offset = 0;
  if (q.limit !== undefined && q.limit !== "") {
    const n = Number(q.limit);
    if (!Number.isInteger(n) || n < 1 || n > 100) c.fail("limit", "an integer from 1 to 100");
    else limit = n;
  }
  if (q.offset !== undefined && q.offset !== "") {
    const n = Number(q.offset);
    if (!Number.isSafeInteger(n) || n < 0) c.fail("offset", "an integer of 0 or more");
    else offset = n;
  }
  c.done();
  return { limit, offset };
}

export const pagination = (total: number, limit: number, offset: number, returned: number) => ({ total, limit, offset, has_more: offset + returned < total });

/** "true" / "false" query flags. */
export function flag(c: Checks, field: string, v: unknown): boolean | undefined {
  if (v === undefined || v === "") return undefined;
  if (v === "true" || v === true) return true;
  if (v === "false" || v === false) return false;
  return c.fail(field, "true or false");
}

/** The words of a full-text query: letters and digits, lower-cased; at most 16. */
export function searchWords(q: string): string[] {
  return (q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 16);
}
