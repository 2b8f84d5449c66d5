/**
 * Limits of a community's fields and list, in a leaf module: the schemas (validation and the
 * OpenAPI document) and the service both read them, and the schemas must not import the
 * service, which imports its views, which are typed by the schemas.
 */
export const SLUG_RE = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;
export const DISPLAY_NAME_MAX = 200;
export const DESCRIPTION_MAX = 2000;
export const Q_MAX = 128;
export const LIST_DEFAULT = 50;
export const LIST_MAX = 200;
