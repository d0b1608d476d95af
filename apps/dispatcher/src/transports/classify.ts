import { fail, parseRetryAfter, type SendResult } from "./types";

/**
 * Mapping of each provider's failure to a SendResult. Only three outcomes matter to the caller:
 * the token is dead (mark it, never send again), the failure is transient (retry with backoff,
 * honouring Retry-After), or it is permanent for this message (report, do not retry).
 */

const TRANSIENT_NET_CODES = new Set([
  "ECONNRESET", "ECONNREFUSED", "ECONNABORTED", "EPIPE", "ETIMEDOUT", "EAI_AGAIN", "ENOTFOUND", "EHOSTUNREACH",
  "ENETUNREACH", "ERR_HTTP2_STREAM_ERROR", "ERR_HTTP2_SESSION_ERROR", "ERR_HTTP2_GOAWAY_SESSION",
  "ERR_HTTP2_STREAM_CANCEL", "ERR_HTTP2_INVALID_SESSION", "ConnectionRefused", "ConnectionClosed", "FailedToOpenSocket",
]);

function causes(err: unknown): any[] {
  const out: any[] = [];
  let e: any = err;
  for (let i = 0; e && i < 6; i++, e = e.cause) {
    out.push(e);
    if (Array.isArray(e.errors)) out.push(...e.errors);
  }
  return out;
}

function networkResult(err: unknown): SendResult | null {
  for (const e of causes(err)) {
    if (e?.code === "ETIMEDOUT" || e?.name === "TimeoutError" || /timeout/i.test(String(e?.message ?? ""))) return fail("timeout", { retryable: true });
    if (TRANSIENT_NET_CODES.has(e?.code)) return fail("network", { retryable: true });
  }
  return null;
}

// ---- FCM (firebase-admin FirebaseMessagingError / FirebaseAppError) -----------------------------

const FCM_ERROR_TYPE = "type.googleapis.com/google.firebase.fcm.v1.FcmError";
const BAD_REQUEST_TYPE = "type.googleapis.com/google.rpc.BadRequest";

/** The FCM v1 error code from a response body: FcmError detail first, then the canonical status. */
function fcmServerCode(body: any): string | undefined {
  const details = Array.isArray(body?.error?.details) ? body.error.details : [];
  const fcm = details.find((d: any) => d?.["@type"] === FCM_ERROR_TYPE);
  return fcm?.errorCode ?? body?.error?.status;
}

/** INVALID_ARGUMENT is about the token only when FCM says so (field message.token). */
function isTokenViolation(body: any): boolean {
  const details = Array.isArray(body?.error?.details) ? body.error.details : [];
  for (const d of details) {
    if (d?.["@type"] !== BAD_REQUEST_TYPE || !Array.isArray(d.fieldViolations)) continue;
    if (d.fieldViolations.some((v: any) => v?.field === "message.token")) return true;
  }
  return /registration token/i.test(String(body?.error?.message ?? ""));
}

export function classifyFcmError(err: any): SendResult {
  const http = err?.httpResponse as { status?: number; headers?: Record<string, unknown>; data?: unknown } | undefined;
  if (http && typeof http.status === "number") {
    const status = http.status;
    const body: any = typeof http.data === "object" ? http.data : null;
    const code = fcmServerCode(body) ?? `http_${status}`;
    const retryAfterMs = parseRetryAfter(http.headers?.["retry-after"]);
    if (code === "UNREGISTERED" || code === "NOT_FOUND") return fail(code === "NOT_FOUND" ? "UNREGISTERED" : code, { tokenInvalid: true });
    if (code === "INVALID_ARGUMENT") return fail("INVALID_ARGUMENT", { tokenInvalid: isTokenViolation(body) });
    if (status === 429 || status >= 500 || code === "QUOTA_EXCEEDED" || code === "UNAVAILABLE" || code === "INTERNAL") {
      return fail(code, { retryable: true, retryAfterMs });
    }
    return fail(code);
  }
  const c = String(err?.code ?? "");
  if (c === "messaging/registration-token-not-registered") return fail("UNREGISTERED", { tokenInvalid: true });
  if (c === "messaging/invalid-registration-token") return fail("INVALID_ARGUMENT", { tokenInvalid: true });
  const oauth = causes(err).find((e) => e?.name === "OAuthError");
  if (oauth) return fail(oauth.retryable ? "oauth_unavailable" : "oauth_refused", { retryable: !!oauth.retryable });
  if (c === "app/network-timeout") return fail("timeout", { retryable: true });
  if (c === "app/network-error") return fail("network", { retryable: true });
  const net = networkResult(err);
  if (net) return net;
  if (c === "messaging/invalid-argument" || c === "messaging/payload-size-limit-exceeded") return fail("invalid_message");
  return fail(c ? c.replace(/^[a-z-]+\//, "") : "unknown");
}

// ---- APNs (@parse/node-apn ResponseFailure) -----------------------------------------------------

const APNS_TOKEN_DEAD = new Set(["BadDeviceToken", "Unregistered", "ExpiredToken"]);

export function classifyApnsFailure(f: { status?: number | string; response?: { reason?: string }; error?: unknown } | undefined): SendResult {
  const status = typeof f?.status === "number" ? f.status : Number.isInteger(Number(f?.status)) ? Number(f?.status) : NaN;
  if (!Number.isNaN(status)) {
    const reason = typeof f?.response?.reason === "string" ? f.response.reason : `http_${status}`;
    if (status === 410 || APNS_TOKEN_DEAD.has(reason)) return fail(reason, { tokenInvalid: true });
    if (status === 429 || status >= 500) return fail(reason, { retryable: true });
    // The library already regenerated its provider token; the next attempt carries a fresh one.
    if (status === 403 && reason === "ExpiredProviderToken") return fail(reason, { retryable: true });
    return fail(reason);
  }
  const net = networkResult(f?.error ?? f);
  if (net) return net;
  const msg = String((f?.error as any)?.message ?? "");
  // node-apn's own words for a stream that died under it: transient, the session is rebuilt.
  if (/aborted|stream ended unexpectedly|session is either closed|client is destroyed|apn write failed|frame error/i.test(msg)) {
    return fail("network", { retryable: true });
  }
  return fail("unknown");
}

// ---- Web Push (web-push WebPushError or a socket error) -----------------------------------------

export function classifyWebPushError(err: any): SendResult {
  if (err?.code === "EPUSHENDPOINTREFUSED") return fail("endpoint_refused");
  if (typeof err?.statusCode === "number") {
    const s: number = err.statusCode;
    const retryAfterMs = parseRetryAfter(err.headers?.["retry-after"]);
    if (s === 404 || s === 410) return fail(`http_${s}`, { tokenInvalid: true });
    if (s === 413) return fail("payload_too_large");
    if (s === 429 || s >= 500) return fail(`http_${s}`, { retryable: true, retryAfterMs });
    return fail(`http_${s}`);
  }
  const net = networkResult(err);
  if (net) return net;
  if (/socket hang up|Socket timeout/i.test(String(err?.message ?? ""))) return fail("network", { retryable: true });
  if (/certificate|self.signed|altname|ssl|tls|cert/i.test(`${err?.code ?? ""} ${err?.message ?? ""}`)) return fail("tls");
  return fail("unknown");
}
