import { Elysia, ValidationError } from "elysia";
import type { Logger } from "@pushstack/config";
import { AppError } from "./errors";
import { describeValidation } from "./validation";

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

/**
 * Request id, access log and the single error mapping every app uses. Mounted once at the root of
 * each server, with global scope, so every route answers errors in one shape: `{"error": "..."}`.
 */
export function httpBasics(log: Logger, opts: { accessLog?: boolean } = {}) {
  return new Elysia({ name: "http-basics" })
    .derive({ as: "global" }, ({ request }) => {
      const requestId = request.headers.get("x-request-id")?.slice(0, 64) || crypto.randomUUID();
      return { requestId, startedAt: performance.now() };
    })
    .onAfterHandle({ as: "global" }, ({ set, requestId }) => {
      if (requestId) set.headers["x-request-id"] = requestId;
    })
    .onAfterResponse({ as: "global" }, ({ request, set, requestId, startedAt, path }) => {
      if (!opts.accessLog) return;
      log.info("request", {
        request_id: requestId,
        method: request.method,
        path,
        status: set.status,
        ms: startedAt ? Math.round((performance.now() - startedAt) * 10) / 10 : undefined,
      });
    })
    .onError({ as: "global" }, ({ code, error, request, path, set }) => {
      const requestId = request.headers.get("x-request-id")?.slice(0, 64) || crypto.randomUUID();
      const base = { "x-request-id": requestId };
      if (error instanceof AppError) return json(error.status, { error: error.message }, { ...base, ...error.headers });
      if (error instanceof ValidationError || code === "VALIDATION") {
        return json(400, { error: describeValidation(error as ValidationError) }, base);
      }
      if (code === "NOT_FOUND") return json(404, { error: "not found" }, base);
      if (code === "PARSE") return json(400, { error: "malformed request body" }, base);
      // Elysia's status()/error() helpers carry their own status
      const status = (error as { status?: unknown }).status;
      if (typeof status === "number" && status >= 400 && status < 500) {
        return json(status, { error: String((error as Error).message || "request refused") }, base);
      }
      log.error("unhandled error", { request_id: requestId, method: request.method, path, err: error });
      set.status = 500;
      return json(500, { error: `internal server error (request id ${requestId})` }, base);
    });
}

export { json };
