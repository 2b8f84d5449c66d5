/**
 * Limits of this part, in a leaf module: the schemas (validation and the OpenAPI document)
 * and the service both read them, and schemas must not import the service that imports them.
 */
export const NAME_RE = /^[a-z0-9_-]{1,64}$/;
export const SUBJECT_MAX = 998;
export const BODY_MAX = 500_000;
