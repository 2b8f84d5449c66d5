/**
 * Limits of this part, in a leaf module: the schemas (validation and the OpenAPI document)
 * and the service both read them, and schemas must not import the service that imports them.
 */
export const LOCAL_PART_MAX = 64;
export const DISPLAY_NAME_MAX = 200;
export const RETENTION_MIN = 1;
export const RETENTION_MAX = 3650;
export const RETENTION_DEFAULT = 30;
export const LIST_DEFAULT = 20;
export const LIST_MAX = 100;
export const FILTER_MAX = 200;
