/**
 * Calendar days as the analytics range takes them: YYYY-MM-DD, UTC, a day that exists.
 * The pattern is what the OpenAPI shows; the month-length check (2026-02-30) is the
 * handler's, since a pattern that knows leap years would be unreadable and JavaScript's
 * Date rolls 2026-02-30 over to 2 March instead of refusing it.
 */
import { DAY } from "../../core/clock";

export const DAY_PATTERN = "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$";
const DAY_RE = new RegExp(DAY_PATTERN);

const startMs = (day: string) => Date.parse(`${day}T00:00:00.000Z`);

/** A real calendar day, years 0001-9999 (year 0000 is no year of the Gregorian calendar users write). */
export function isCalendarDay(v: string): boolean {
  if (!DAY_RE.test(v) || v.startsWith("0000")) return false;
  const ms = startMs(v);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === v;
}

/** The day `n` days after `day` (negative: before); `day` must be a calendar day. */
export const addDays = (day: string, n: number): string => new Date(startMs(day) + n * DAY).toISOString().slice(0, 10);

/** Days from `since` to `until`, both included (0 or less when until is before since). */
export const daysBetween = (since: string, until: string): number => Math.round((startMs(until) - startMs(since)) / DAY) + 1;

/** The instant `day` starts, ISO 8601 (UTC). */
export const dayStart = (day: string): string => new Date(startMs(day)).toISOString();
