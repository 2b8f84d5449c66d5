/**
 * Limits of this part, in a leaf module: the schemas (validation and the OpenAPI document)
 * and the service both read them, and schemas must not import the service that imports them.
 */
export const DNS_PROVIDER_MAX = 100;
