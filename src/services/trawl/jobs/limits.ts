/**
 * The limits of extraction jobs, in one place for the schemas (validation and the OpenAPI
 * document), the service and the routes: a leaf module, so that schemas need not import the
 * service that imports them.
 */
import { prefixedIdPattern } from "../../../core/ids";

export const DESCRIPTION_MAX = 4000;
export const URLS_MAX = 20;
export const URL_MAX = 2048;
export const STEPS = { min: 1, max: 50, def: 10 } as const;
export const TIMEOUT = { min: 10, max: 900, def: 120 } as const;
export const TIERS = ["standard", "pro"] as const;
export const LIST_DEFAULT = 20;
export const LIST_MAX = 100;
export const CREDIT_LOW_RATIO = 0.9;
export const CREDIT_LIMIT_MAX = 1_000_000_000;
/** Ids as core/ids prefixedId makes them: the prefix and the 32 hex digits of a UUIDv7. */
export const JOB_ID = new RegExp(prefixedIdPattern("job"));
