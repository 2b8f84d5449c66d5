/**
 * Limits of the webhook records and the events log, in a leaf module: the schemas
 * (validation and the OpenAPI document) and the services both read them, and the schemas
 * must not import the services, which import their views, which are typed by the schemas.
 */
export const URL_MAX = 2048;
export const DESCRIPTION_MAX = 500;
export const GRACE_DEFAULT_HOURS = 24;
export const GRACE_MAX_HOURS = 168;
export const DELIVERY_STATUSES = ["pending", "delivered", "failed", "not_sent"] as const;
