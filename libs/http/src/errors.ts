/**
 * One error hierarchy for the whole API. Services throw these; the single onError hook turns them
 * into `{"error": message}` with the status. Anything else is a 500 with a generic message.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new AppError(400, "bad_request", message);
export const unauthorized = (message = "missing or invalid token") => new AppError(401, "unauthorized", message);
export const forbidden = (message: string) => new AppError(403, "forbidden", message);
export const adminRequired = () => new AppError(403, "admin_required", "admin access required");
export const notFound = (what: string) => new AppError(404, "not_found", `${what} not found`);
export const conflict = (message: string) => new AppError(409, "conflict", message);
export const tooManyRequests = (retryAfterSec: number) =>
  new AppError(429, "rate_limited", "rate limit exceeded, retry later", { "retry-after": String(retryAfterSec) });
export const unavailable = (message = "service temporarily unavailable") => new AppError(503, "unavailable", message);

/** A feature or limit above the caller's plan: 403 naming the plan that allows it. */
export const planRequired = (message: string) => new AppError(403, "plan_required", message);
