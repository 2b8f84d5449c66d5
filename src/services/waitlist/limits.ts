/**
 * Limits the request schemas and the entry rules share. Their own module: schemas.ts must not
 * import entries/service.ts, which imports the event declarations that are built from schemas.ts.
 */

/** Entries one bulk approve or reject may name (or take from the top of the queue). */
export const BULK_MAX = 500;
