/** Delivery transports: one module per provider behind the Transport interface (see ADR 0005). */
export {
  OK, fail, parseRetryAfter,
  type TransportKind, type PushContent, type Recipient, type SendResult, type AppCredentials, type FcmServiceAccount,
  type SendItem, type Transport,
} from "./types";
export { credentialsFromEntry } from "./credentials";
export { createFcmTransport, isPlausibleFcmToken, type FcmTransportOptions } from "./fcm";
export { createApnsTransport, isPlausibleApnsToken, type ApnsTransportOptions } from "./apns";
export { createWebPushTransport, parseSubscription, type WebPushTransportOptions } from "./webpush";
export { buildFcmMessage, buildApnsNotification, buildWebPushPayload, contentKeys } from "./payload";
export { classifyFcmError, classifyApnsFailure, classifyWebPushError } from "./classify";
export { sendWithRetry, retryDelayMs, DEFAULT_RETRY_POLICY, type RetryPolicy, type RetryOptions } from "./retry";
export { checkEndpoint, isPublicAddress, parseAllowedHosts, checkResolved, WELL_KNOWN_PUSH_HOSTS } from "./webpush-guard";
export { ServiceAccountCredential, OAuthError, GOOGLE_OAUTH_TOKEN_URL } from "./fcm-credential";
export {
  FCM_MAX_BATCH_SIZE, FCM_PROJECT_MESSAGES_PER_MINUTE, FCM_RATE_SAFETY, FCM_MAX_PAYLOAD_BYTES, APNS_MAX_PAYLOAD_BYTES,
  WEBPUSH_MAX_PAYLOAD_BYTES, DEFAULT_TTL_SECONDS, Semaphore, RateLimiter, KeyedSemaphores,
} from "./limits";

import type { Transport, TransportKind } from "./types";
import { createFcmTransport, type FcmTransportOptions } from "./fcm";
import { createApnsTransport, type ApnsTransportOptions } from "./apns";
import { createWebPushTransport, type WebPushTransportOptions } from "./webpush";

/** The three transports the dispatcher holds, created together and closed together. */
export function createTransports(opts: { fcm?: FcmTransportOptions; apns?: ApnsTransportOptions; webpush?: WebPushTransportOptions } = {}): Record<TransportKind, Transport> & { close(): Promise<void> } {
  const t = { fcm: createFcmTransport(opts.fcm), apns: createApnsTransport(opts.apns), webpush: createWebPushTransport(opts.webpush) };
  return { ...t, close: async () => void (await Promise.all([t.fcm.close(), t.apns.close(), t.webpush.close()])) };
}
