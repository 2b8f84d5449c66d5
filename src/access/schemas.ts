/**
 * API models every service shares (the house's one error body and one list envelope), so a
 * service imports them from here instead of from another service.
 */
import { t } from "../core/schema";

/** {"error": {"code", "message", "details"}}: the body of every 4xx and 5xx answer. */
export const ErrorBody = t.Object({
  error: t.Object({
    code: t.String(),
    message: t.String(),
    details: t.Optional(t.Array(t.Object({ field: t.String(), reason: t.String() }))),
  }),
});

/** The `pagination` of every cursor-paged list: {data, pagination: {next_cursor, has_more}}. */
export const Pagination = t.Object({ next_cursor: t.Nullable(t.String()), has_more: t.Boolean() });

/** Query of a cursor-paged list. */
export const ListQuery = t.Object({ limit: t.Optional(t.QueryInteger()), cursor: t.Optional(t.String()) });

/**
 * Any JSON object (settings, metadata, claims, payloads), and nothing else: a string, array
 * or null fails as "Expected object" naming the field. The additional properties are a schema
 * (`t.Unknown()`), not `true`: Elysia cleans input and output with TypeBox's Clean, which
 * keeps no key that only `additionalProperties: true` allows (the object arrived empty).
 * An open object rather than `t.Record(t.String(), t.Unknown())`: the same values pass, but
 * TypeBox's compiled check of a Record walks Object.entries with a key pattern on every request
 * and every response, where this one checks "is an object" once.
 */
export const JsonObject = (options: { description?: string } = {}) => t.Object({}, { ...options, additionalProperties: t.Unknown() });

/**
 * A UUID and nothing else: `format: uuid` documents it; the pattern refuses what Elysia's uuid
 * format also lets through (a `urn:uuid:` prefix). Upper-case hex is accepted (services
 * lower-case before lookups). A malformed one is a 400 naming the field, before any lookup.
 */
export const UUID_PATTERN = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";
export const Uuid = (description?: string) => t.String({ format: "uuid", pattern: UUID_PATTERN, ...(description === undefined ? {} : { description }) });
