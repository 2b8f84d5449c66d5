/**
 * Ids a caller names in a path or body, checked after the caller is authorized and before any
 * lookup: a malformed one is 400 naming its field, a well-formed one that names nothing the
 * App has is the lookup's 404.
 */
import { invalidField } from "../../core/errors";
import { isUuid } from "../../core/ids";

const TENANT_DISPLAY_ID = /^tnt_[0-9a-f]{12}$/;

export function uuidRef(field: string, value: string): string {
  if (!isUuid(value)) throw invalidField(field, "must be a UUID");
  return value;
}

/** A tenant by its UUID or its tnt_ display id. */
export function tenantRef(field: string, value: string): string {
  if (!isUuid(value) && !TENANT_DISPLAY_ID.test(value)) throw invalidField(field, "must be a tenant UUID or tnt_ display id");
  return value;
}
