/**
 * The one schema builder of every route: Elysia's `t`, with JSON bodies typed exactly.
 *
 * Elysia's own `t.Integer` is a coercing union (an integer, or a string of digits decoded to
 * one), so `{"max_steps": "5"}` passed a body schema, and every integer field was documented
 * as `string | integer` in the OpenAPI (openapi-typescript typed ~570 fields `string | number`).
 * Here `t.Integer` is TypeBox's plain integer: a JSON body or response takes a JSON number.
 *
 * `t.UnionEnum` has no default unless one is given (Elysia's takes the first value).
 *
 * Only query strings are parsed into numbers and booleans: Elysia already coerces `t.Number`
 * and `t.Boolean` in a query; `t.QueryInteger` is the integer a query string carries (decoded
 * from its digits), documented as `integer` by core/openapi.ts.
 */
import { t as elysiaT } from "elysia";
import { Type, type IntegerOptions, type TInteger } from "@sinclair/typebox";

interface StrictTypes {
  /** A JSON integer (never a numeric string). */
  Integer(options?: IntegerOptions): TInteger;
  /** An integer query parameter: "20" decodes to 20; "2x" or "1.5" is a 400 naming the parameter; bounds are the route's to check. */
  QueryInteger(options?: IntegerOptions): TInteger;
}

export const t: Omit<typeof elysiaT, "Integer"> & StrictTypes = Object.assign(Object.create(elysiaT), {
  Integer: (options?: IntegerOptions) => Type.Integer(options),
  // Elysia's UnionEnum sets the first value as the default, which fills a missing required
  // field with it (a reaction sent without a type became a like) and documents a default
  // nobody chose: here a UnionEnum has a default only when the route gives one.
  UnionEnum: ((values, options = {}) => {
    const schema = elysiaT.UnionEnum(values, options);
    if ((options as { default?: unknown }).default === undefined) delete (schema as { default?: unknown }).default;
    return schema;
  }) as typeof elysiaT.UnionEnum,
  // Digits decoded to a number. The bounds are documented on the union (TypeBox checks a
  // union by its variants only): the route enforces them, naming the parameter, where Elysia's
  // own t.Integer checked them in its decode step and reported the field as "root".
  QueryInteger: (options?: IntegerOptions) =>
    elysiaT
      .Transform(elysiaT.Union([elysiaT.String({ format: "integer" }), Type.Integer()], options))
      .Decode((value) => Number(value))
      .Encode((value) => value) as unknown as TInteger,
});
