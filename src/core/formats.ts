/**
 * A fast path for the `date-time` string format, which TypeBox checks on every timestamp of
 * every validated request and response (a workspace read checks two, a card list hundreds).
 *
 * Elysia registers a lenient checker (RFC 3339, but also "Mon Jan 01 2024 ..." and short
 * dates): a quote-stripping replace, an unanchored three-way regex and a Date per value.
 * Every timestamp Bunker writes has the one shape `Date.toISOString()` produces, so that
 * shape is recognised with one anchored regex and a parse; anything else still goes to
 * Elysia's checker, so what is accepted does not change.
 */
import { FormatRegistry } from "@sinclair/typebox";
import "elysia"; // registers its checker first: the fallback below

/** YYYY-MM-DDTHH:MM:SS.sssZ with the same digit ranges as Elysia's pattern. */
const CANONICAL = /^\d{4}-[01]\d-[0-3]\dT[0-2]\d:[0-5]\d:[0-5]\d\.\d{3}Z$/;

const lenient = FormatRegistry.Get("date-time");
if (lenient && !(lenient as { fast?: true }).fast) {
  const fast = (value: string) => (value.length === 24 && CANONICAL.test(value) ? !Number.isNaN(Date.parse(value)) : lenient(value));
  FormatRegistry.Set("date-time", Object.assign(fast, { fast: true as const }));
}
