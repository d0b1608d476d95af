/**
 * The one interface every delivery transport (FCM, APNs, Web Push) implements.
 * The job consumer renders content, then hands a batch of (recipient, content) pairs to the
 * transport of the batch's platform and gets back one result per item, in order.
 */

export type TransportKind = "fcm" | "apns" | "webpush";

/** The contract's payload keys; `msg_id` comes back in delivered/clicked reports. */
export interface PushContent {
  msg_id: string;
  title: string;
  body: string;
  icon_url?: string | null;
  image_url?: string | null;
  click_url?: string | null;
}

export interface Recipient {
  device_id: number;
  /** FCM registration token, APNs hex device token, or Web Push subscription JSON {endpoint, keys:{p256dh, auth}}. */
  token: string;
}

/**
 * Outcome of one recipient. `tokenInvalid` means the device's token will never work again
 * (core marks it so nothing is sent to it again); `retryable` means the same request may succeed
 * later (429, 5xx, timeouts), after at least `retryAfterMs` when the provider said so.
 * `reason` is a short machine code: the provider's own (`UNREGISTERED`, `BadDeviceToken`,
 * `http_410`, ...) or ours for local refusals (`invalid_token`, `endpoint_refused`, ...).
 */
export type SendResult =
  | { ok: true }
  | { ok: false; retryable: boolean; reason: string; tokenInvalid: boolean; retryAfterMs?: number };

export interface FcmServiceAccount {
  project_id: string;
  client_email: string;
  private_key: string;
}

export interface AppCredentials {
  appId: number;
  /** Changes whenever any credential of the app changes (rotation); transports rebuild clients on change. */
  version: string | number;
  fcm?: { serviceAccount: FcmServiceAccount };
  apns?: { keyP8: string; keyId: string; teamId: string; bundleId: string; production: boolean };
  webpush?: { publicKey: string; privateKey: string; subject: string };
}

export interface SendItem {
  recipient: Recipient;
  content: PushContent;
}

export interface Transport {
  readonly kind: TransportKind;
  /**
   * Sends each item once and classifies the outcome; never throws, never retries by itself
   * (see retry.ts), and one failing item never fails the others. Results are in item order.
   */
  send(creds: AppCredentials, items: SendItem[]): Promise<SendResult[]>;
  /** Closes every client, connection and library app the transport holds. */
  close(): Promise<void>;
}

export const OK: SendResult = Object.freeze({ ok: true }) as SendResult;

export function fail(reason: string, opts: { retryable?: boolean; tokenInvalid?: boolean; retryAfterMs?: number } = {}): SendResult {
  const r: SendResult = { ok: false, retryable: opts.retryable ?? false, reason, tokenInvalid: opts.tokenInvalid ?? false };
  if (opts.retryAfterMs !== undefined && Number.isFinite(opts.retryAfterMs) && opts.retryAfterMs >= 0) r.retryAfterMs = opts.retryAfterMs;
  return r;
}

/** Parses an HTTP Retry-After value (delta-seconds or HTTP-date) into milliseconds from now. */
export function parseRetryAfter(value: unknown, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (typeof v === "number" && Number.isFinite(v) && v >= 0) return v * 1000;
  if (typeof v !== "string" || v.trim() === "") return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Results for input send() cannot use at all (not an array, no app id): classified, never thrown. */
export function unusableInput(creds: unknown, items: unknown): SendResult[] | null {
  if (!Array.isArray(items)) return [];
  const c = creds as AppCredentials | null | undefined;
  if (!c || typeof c !== "object" || !Number.isInteger(c.appId) || (typeof c.version !== "string" && typeof c.version !== "number")) return items.map(() => fail("missing_credentials"));
  return null;
}
