/**
 * The one error body of every service:
 *   {"error": {"code": "VALIDATION_ERROR", "message": "...", "details": [{"field", "reason"}]}}
 * Route and domain code throws ApiError; the HTTP kernel turns anything else into
 * a 500 without leaking a stack trace.
 */
export interface ErrorDetail {
  field: string;
  reason: string;
}

export class ApiError extends Error {
  constructor(
    public readonly status: number,
    public readonly code: string,
    message: string,
    public readonly details?: ErrorDetail[],
    public readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  toBody() {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details && this.details.length ? { details: this.details } : {}),
      },
    };
  }
}

export const badRequest = (message: string, details?: ErrorDetail[], code = "VALIDATION_ERROR") =>
  new ApiError(400, code, message, details);
export const invalidField = (field: string, reason: string) =>
  new ApiError(400, "VALIDATION_ERROR", `Invalid ${field}: ${reason}`, [{ field, reason }]);
export const unauthorized = (message = "Missing or invalid credentials", code = "UNAUTHORIZED") =>
  new ApiError(401, code, message);
export const forbidden = (message = "Not allowed", code = "FORBIDDEN") => new ApiError(403, code, message);
export const notFound = (what = "Resource") => new ApiError(404, "NOT_FOUND", `${what} not found`);
export const conflict = (message: string, code = "CONFLICT") => new ApiError(409, code, message);
export const tooMany = (message: string, retryAfterSec?: number, code = "TOO_MANY_ATTEMPTS") =>
  new ApiError(429, code, message, undefined, retryAfterSec ? { "retry-after": String(retryAfterSec) } : undefined);

export function errorBody(code: string, message: string, details?: ErrorDetail[]) {
  return new ApiError(0, code, message, details).toBody();
}
