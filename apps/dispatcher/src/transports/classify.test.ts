import { describe, expect, test } from "bun:test";
import { classifyApnsFailure, classifyFcmError, classifyWebPushError } from "./classify";
import { OAuthError } from "./fcm-credential";

/**
 * The mapping tables on their own, with the error shapes the libraries produce. The same
 * classifications are exercised through the real libraries against the peers in
 * fcm.test.ts, apns.test.ts and webpush.test.ts.
 */

const fcmHttp = (status: number, body: unknown, headers: Record<string, string> = {}) => ({ code: "messaging/x", httpResponse: { status, headers, data: body } });
const fcmBody = (status: string, errorCode?: string, extra: unknown[] = []) => ({
  error: { code: 0, message: "m", status, details: [...(errorCode ? [{ "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", errorCode }] : []), ...extra] },
});
const violation = (field: string) => ({ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ field, description: "d" }] });

describe("classifyFcmError", () => {
  test("UNREGISTERED marks the token invalid", () => {
    expect(classifyFcmError(fcmHttp(404, fcmBody("NOT_FOUND", "UNREGISTERED")))).toEqual({ ok: false, retryable: false, reason: "UNREGISTERED", tokenInvalid: true });
  });
  test("INVALID_ARGUMENT is a token error only when FCM blames message.token", () => {
    expect(classifyFcmError(fcmHttp(400, fcmBody("INVALID_ARGUMENT", "INVALID_ARGUMENT", [violation("message.token")])))).toMatchObject({ tokenInvalid: true, retryable: false });
    expect(classifyFcmError(fcmHttp(400, fcmBody("INVALID_ARGUMENT", "INVALID_ARGUMENT", [violation("message.data[x]")])))).toMatchObject({ tokenInvalid: false, retryable: false, reason: "INVALID_ARGUMENT" });
  });
  test("QUOTA_EXCEEDED is retryable after Retry-After", () => {
    expect(classifyFcmError(fcmHttp(429, fcmBody("RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED"), { "retry-after": "7" }))).toEqual({ ok: false, retryable: true, reason: "QUOTA_EXCEEDED", tokenInvalid: false, retryAfterMs: 7000 });
  });
  test("5xx are retryable, auth and sender errors are not", () => {
    expect(classifyFcmError(fcmHttp(500, fcmBody("INTERNAL", "INTERNAL")))).toMatchObject({ retryable: true, tokenInvalid: false });
    expect(classifyFcmError(fcmHttp(503, fcmBody("UNAVAILABLE", "UNAVAILABLE")))).toMatchObject({ retryable: true });
    expect(classifyFcmError(fcmHttp(502, "<html>bad gateway</html>"))).toMatchObject({ retryable: true, reason: "http_502" });
    expect(classifyFcmError(fcmHttp(403, fcmBody("PERMISSION_DENIED", "SENDER_ID_MISMATCH")))).toMatchObject({ retryable: false, tokenInvalid: false, reason: "SENDER_ID_MISMATCH" });
    expect(classifyFcmError(fcmHttp(401, fcmBody("UNAUTHENTICATED")))).toMatchObject({ retryable: false, tokenInvalid: false, reason: "UNAUTHENTICATED" });
  });
  test("errors without a response: timeouts and socket errors retry, OAuth refusals do not", () => {
    expect(classifyFcmError({ code: "app/network-timeout" })).toMatchObject({ retryable: true, reason: "timeout" });
    expect(classifyFcmError({ code: "messaging/unknown-error", cause: new AggregateError([Object.assign(new Error("x"), { code: "ECONNRESET" })]) })).toMatchObject({ retryable: true, reason: "network" });
    expect(classifyFcmError({ code: "app/invalid-credential", cause: new OAuthError("invalid_grant", false, 400) })).toMatchObject({ retryable: false, reason: "oauth_refused" });
    expect(classifyFcmError({ code: "app/invalid-credential", cause: new OAuthError("down", true, 503) })).toMatchObject({ retryable: true, reason: "oauth_unavailable" });
    expect(classifyFcmError({ code: "messaging/invalid-argument" })).toMatchObject({ retryable: false, tokenInvalid: false });
    expect(classifyFcmError(undefined)).toMatchObject({ ok: false, retryable: false, reason: "unknown" });
  });
});

describe("classifyApnsFailure", () => {
  test("410 and BadDeviceToken mark the token invalid", () => {
    expect(classifyApnsFailure({ status: 410, response: { reason: "Unregistered" } })).toEqual({ ok: false, retryable: false, reason: "Unregistered", tokenInvalid: true });
    expect(classifyApnsFailure({ status: 400, response: { reason: "BadDeviceToken" } })).toMatchObject({ tokenInvalid: true, retryable: false });
  });
  test("429, 500, 503 and an expired provider token are retryable", () => {
    for (const [status, reason] of [[429, "TooManyRequests"], [500, "InternalServerError"], [503, "ServiceUnavailable"], [403, "ExpiredProviderToken"]] as const) {
      expect(classifyApnsFailure({ status, response: { reason } })).toMatchObject({ retryable: true, tokenInvalid: false, reason });
    }
  });
  test("other client errors are permanent, not token errors", () => {
    for (const reason of ["TopicDisallowed", "InvalidProviderToken", "DeviceTokenNotForTopic", "PayloadTooLarge"]) {
      expect(classifyApnsFailure({ status: reason === "PayloadTooLarge" ? 413 : 400, response: { reason } })).toMatchObject({ retryable: false, tokenInvalid: false, reason });
    }
  });
  test("node-apn's transport errors are transient", () => {
    expect(classifyApnsFailure({ error: new Error("apn write timeout") })).toMatchObject({ retryable: true, reason: "timeout" });
    expect(classifyApnsFailure({ error: new Error("apn write aborted") })).toMatchObject({ retryable: true, reason: "network" });
    expect(classifyApnsFailure({ error: Object.assign(new Error("connect"), { code: "ECONNREFUSED" }) })).toMatchObject({ retryable: true });
    expect(classifyApnsFailure(undefined)).toMatchObject({ retryable: false, reason: "unknown" });
  });
});

describe("classifyWebPushError", () => {
  const wpe = (statusCode: number, headers: Record<string, string> = {}) => ({ name: "WebPushError", statusCode, headers, body: "" });
  test("404 and 410 mark the subscription invalid", () => {
    expect(classifyWebPushError(wpe(404))).toMatchObject({ tokenInvalid: true, retryable: false, reason: "http_404" });
    expect(classifyWebPushError(wpe(410))).toMatchObject({ tokenInvalid: true, retryable: false, reason: "http_410" });
  });
  test("429 and 5xx retry, honouring Retry-After (seconds or date)", () => {
    expect(classifyWebPushError(wpe(429, { "retry-after": "3" }))).toMatchObject({ retryable: true, retryAfterMs: 3000 });
    const r = classifyWebPushError(wpe(503, { "retry-after": new Date(Date.now() + 10_000).toUTCString() }));
    expect(r).toMatchObject({ retryable: true });
    expect(!r.ok && r.retryAfterMs! > 8000 && r.retryAfterMs! <= 10_000).toBe(true);
  });
  test("other statuses are permanent; socket errors transient; a refused endpoint is final", () => {
    expect(classifyWebPushError(wpe(413))).toMatchObject({ retryable: false, reason: "payload_too_large" });
    expect(classifyWebPushError(wpe(403))).toMatchObject({ retryable: false, tokenInvalid: false });
    expect(classifyWebPushError(Object.assign(new Error("x"), { code: "ECONNRESET" }))).toMatchObject({ retryable: true, reason: "network" });
    expect(classifyWebPushError(new Error("Socket timeout"))).toMatchObject({ retryable: true, reason: "timeout" });
    expect(classifyWebPushError({ code: "EPUSHENDPOINTREFUSED" })).toMatchObject({ retryable: false, tokenInvalid: false, reason: "endpoint_refused" });
  });
});
