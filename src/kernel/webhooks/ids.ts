/**
 * The shapes of the webhook engine's ids, as core/ids prefixedId makes them (the prefix and
 * the 32 lowercase hex digits of a UUIDv7): endpoints ep_... (created on the shared surface)
 * and whk_... (legacy records: the deprecated {scope}/webhooks routes, the card board's and
 * the community's own records, all rows of webhook_endpoints), events evt_... (the outbox's
 * and the test sends').
 *
 * Every route that takes one declares it: a malformed id is 400 VALIDATION_ERROR naming the
 * field before the scope is resolved, a well-formed one that matches nothing 404.
 */
import { prefixedIdPattern } from "../../core/ids";
import { t } from "../../core/schema";

/** Any endpoint of a scope: the shared surface lists and manages the legacy records too. */
export const ENDPOINT_ID = new RegExp(prefixedIdPattern("ep", "whk"));
/** A legacy webhook record. */
export const LEGACY_WEBHOOK_ID = new RegExp(prefixedIdPattern("whk"));
export const EVENT_ID = new RegExp(prefixedIdPattern("evt"));

export const EndpointId = (description = "An endpoint id: ep_... or whk_... (a legacy record), followed by 32 hex digits") =>
  t.String({ pattern: ENDPOINT_ID.source, description });
export const LegacyWebhookId = (description = "A legacy webhook id: whk_ followed by 32 hex digits") => t.String({ pattern: LEGACY_WEBHOOK_ID.source, description });
export const EventId = (description = "An event id: evt_ followed by 32 hex digits") => t.String({ pattern: EVENT_ID.source, description });
