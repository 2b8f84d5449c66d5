/**
 * A JSON object field (any keys, any values) that refuses anything else. Not an open
 * `t.Object({}, { additionalProperties: true })`: Elysia cleans a body with TypeBox's Clean
 * before validating it, and Clean keeps no key that only `true` allows, so such a field
 * arrived empty. An additionalProperties schema keeps every key; a string, array or null
 * still fails the object check ("Expected object", naming the field).
 */
import { t } from "../../core/schema";

export const StrictObject = (options: { description?: string } = {}) => t.Object({}, { ...options, additionalProperties: t.Unknown() });
