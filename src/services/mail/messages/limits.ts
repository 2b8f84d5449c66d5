/**
 * Limits of this part, in a leaf module: the schemas (validation and the OpenAPI document)
 * and the service both read them, and schemas must not import the service that imports them.
 */
export const MAX_BLOCK_SIGNALS = 10;
export const WINDOW_DEFAULT = 14;
export const WINDOW_MAX = 90;
export const TIMELINE_MAX_BUCKETS = 366;
/** A suppressed address: only addresses of this form are ever suppressed (added, or sent to and bounced). */
export const EMAIL_MAX = 254;
export const EMAIL_RE = /^[^\s@<>(),;:"\\]+@[^\s@<>(),;:"\\]+\.[^\s@<>(),;:"\\]+$/;
