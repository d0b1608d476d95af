import { randomBytes } from "node:crypto";
import { deleteApp, initializeApp, type App } from "firebase-admin/app";
import { getMessaging, type Messaging, type BatchResponse, type TokenMessage } from "firebase-admin/messaging";
import { ServiceAccountCredential } from "./fcm-credential";
import { installProviderSessionHook, withFcmRoute, type FcmRoute } from "./h2-connect";
import { classifyFcmError } from "./classify";
import { buildFcmMessage, isValidContent } from "./payload";
import {
  DEFAULT_TTL_SECONDS, FCM_MAX_BATCH_SIZE, FCM_MAX_PAYLOAD_BYTES, FCM_PROJECT_MESSAGES_PER_MINUTE, FCM_RATE_SAFETY,
  KeyedSemaphores, RateLimiter, Semaphore,
} from "./limits";
import { fail, unusableInput, type AppCredentials, type SendItem, type SendResult, type Transport } from "./types";

/**
 * FCM through firebase-admin: one named Firebase app per (app id, credential version), never the
 * default app, each with a ServiceAccountCredential; messages go out in `sendEach` calls of at
 * most 500 over HTTP/2. A rotated credential gets a new Firebase app at once; the old one is
 * deleted when its last in-flight batch ends. Sends are paced under the per-project quota and
 * bounded in concurrency per transport and per app.
 */

export interface FcmTransportOptions {
  /** Dial this address instead of fcm.googleapis.com:443 (TLS name stays fcm.googleapis.com). Tests. */
  connectTo?: { host: string; port: number };
  /** Extra CA (PEM) to trust for connectTo and the token endpoint. Tests. */
  ca?: string;
  /** OAuth token endpoint; default https://oauth2.googleapis.com/token. */
  oauthTokenUrl?: string;
  ttlSeconds?: number;
  /** sendEach calls (one HTTP/2 session each) in flight for the whole transport. */
  maxConcurrentBatches?: number;
  /**
   * ... and for one app. Default 4: 2,000 requests in flight per app cover ~200 ms of latency at the
   * per-project quota (10k/s), and each sendEach in flight holds ~20 MB (500 streams, their promises,
   * closures and buffers): 8 cost ~90 MB more per process for no throughput (bench/sending.ts).
   */
  maxConcurrentBatchesPerApp?: number;
  /** Per-project quota; the transport uses FCM_RATE_SAFETY of it. */
  projectMessagesPerMinute?: number;
  /** Messages per sendEach call (one HTTP/2 session each), at most FCM_MAX_BATCH_SIZE. */
  batchSize?: number;
}

interface AppEntry {
  version: string | number;
  app: App | null;
  messaging: Messaging | null;
  /** Why the credentials cannot be used, when they cannot. */
  broken: SendResult | null;
  inflight: number;
  retired: boolean;
  projectId: string;
  /** Set by close(): resolves its wait once the last in-flight batch has ended. */
  onIdle?: () => void;
}

/** Registration tokens are opaque, but never empty, huge, or made of whitespace/control characters. */
export function isPlausibleFcmToken(token: unknown): token is string {
  return typeof token === "string" && token.length >= 16 && token.length <= 4096 && /^[\x21-\x7e]+$/.test(token);
}

/** Size of the data payload as FCM counts it; exact JSON only when a cheap estimate comes close. */
function dataBytes(data: Record<string, string>): number {
  let n = 2;
  for (const k in data) n += Buffer.byteLength(k) + Buffer.byteLength(data[k]) + 6;
  return n < FCM_MAX_PAYLOAD_BYTES / 2 ? n : Buffer.byteLength(JSON.stringify(data));
}

export function createFcmTransport(opts: FcmTransportOptions = {}): Transport & { appNames(): string[] } {
  installProviderSessionHook();
  const instance = randomBytes(4).toString("hex");
  const ttl = opts.ttlSeconds ?? DEFAULT_TTL_SECONDS;
  const route: FcmRoute | undefined = opts.connectTo ? { ...opts.connectTo, ca: opts.ca } : undefined;
  const perMinute = opts.projectMessagesPerMinute ?? FCM_PROJECT_MESSAGES_PER_MINUTE;
  const batchSize = Math.max(1, Math.min(FCM_MAX_BATCH_SIZE, Math.floor(opts.batchSize ?? FCM_MAX_BATCH_SIZE)));
  const batches = new Semaphore(opts.maxConcurrentBatches ?? 16);
  const perApp = new KeyedSemaphores<number>(opts.maxConcurrentBatchesPerApp ?? 4);
  const rates = new Map<string, RateLimiter>();
  const apps = new Map<number, AppEntry>();
  const retired = new Set<AppEntry>();
  let seq = 0;
  let closed = false;

  function dispose(e: AppEntry): Promise<void> {
    retired.delete(e);
    const app = e.app;
    e.app = null;
    e.messaging = null;
    return app ? deleteApp(app).catch(() => {}) : Promise.resolve();
  }

  function entryFor(creds: AppCredentials): AppEntry {
    const cur = apps.get(creds.appId);
    if (cur && cur.version === creds.version) return cur;
    if (cur) {
      cur.retired = true;
      retired.add(cur);
      if (cur.inflight === 0) void dispose(cur);
    }
    const sa = creds.fcm?.serviceAccount;
    const e: AppEntry = { version: creds.version, app: null, messaging: null, broken: null, inflight: 0, retired: false, projectId: sa?.project_id ?? "" };
    if (!sa) {
      e.broken = fail("missing_credentials");
    } else {
      try {
        const credential = new ServiceAccountCredential(sa, { tokenUrl: opts.oauthTokenUrl, ca: opts.ca });
        // Named per transport instance, app and version: never the default app, never shared.
        e.app = initializeApp({ credential, projectId: sa.project_id }, `pushstack-fcm-${instance}-${creds.appId}-${++seq}`);
        e.messaging = getMessaging(e.app);
      } catch (err) {
        e.broken = fail("invalid_credentials");
      }
    }
    apps.set(creds.appId, e);
    return e;
  }

  function rateFor(projectId: string): RateLimiter {
    let r = rates.get(projectId);
    if (!r) rates.set(projectId, (r = new RateLimiter((perMinute / 60) * FCM_RATE_SAFETY, 1)));
    return r;
  }

  async function sendBatch(e: AppEntry, appId: number, messages: TokenMessage[]): Promise<SendResult[]> {
    await rateFor(e.projectId).take(messages.length);
    const appSlot = perApp.get(appId);
    await appSlot.acquire();
    await batches.acquire();
    try {
      if (!e.messaging) return messages.map(() => fail("transport_closed", { retryable: true }));
      const messaging = e.messaging;
      const resp: BatchResponse = await withFcmRoute(route, () => messaging.sendEach(messages));
      return resp.responses.map((r) => (r.success ? { ok: true } : classifyFcmError(r.error)));
    } catch (err) {
      // sendEach rejects as a whole only for bad input or a library fault; classify for every message.
      const r = classifyFcmError(err);
      return messages.map(() => r);
    } finally {
      batches.release();
      appSlot.release();
    }
  }

  /** A send() holds its entry from start to end, so rotation never deletes an app under it. */
  function release(e: AppEntry): void {
    e.inflight--;
    if (e.inflight === 0) {
      if (e.retired) void dispose(e);
      e.onIdle?.();
    }
  }

  async function sendItems(e: AppEntry, creds: AppCredentials, items: SendItem[]): Promise<SendResult[]> {
    const results: SendResult[] = new Array(items.length);
    const idx: number[] = [];
    const msgs: TokenMessage[] = [];
    items.forEach((it, i) => {
      if (e.broken) return void (results[i] = e.broken);
      const token = it?.recipient?.token;
      if (!isPlausibleFcmToken(token)) return void (results[i] = fail("invalid_token", { tokenInvalid: true }));
      if (!isValidContent(it.content)) return void (results[i] = fail("invalid_content"));
      const m = buildFcmMessage(token, it.content, ttl);
      if (dataBytes(m.data!) > FCM_MAX_PAYLOAD_BYTES) return void (results[i] = fail("payload_too_large"));
      idx.push(i);
      msgs.push(m);
    });
    const chunks: Promise<void>[] = [];
    for (let start = 0; start < msgs.length; start += batchSize) {
      const part = msgs.slice(start, start + batchSize);
      chunks.push(sendBatch(e, creds.appId, part).then((rs) => rs.forEach((r, k) => (results[idx[start + k]] = r))));
    }
    await Promise.all(chunks);
    return results;
  }

  const live = () => [...apps.values(), ...retired].filter((e) => e.app);

  return {
    kind: "fcm",
    async send(creds, items) {
      const unusable = unusableInput(creds, items);
      if (unusable) return unusable;
      if (closed) return items.map(() => fail("transport_closed", { retryable: true }));
      const e = entryFor(creds);
      e.inflight++;
      try {
        return await sendItems(e, creds, items);
      } finally {
        release(e);
        perApp.prune();
      }
    },
    async close() {
      closed = true;
      const all = [...apps.values(), ...retired];
      apps.clear();
      // Sends already under way finish first; their Firebase apps are deleted right after.
      await Promise.all(all.map((e) => (e.inflight === 0 ? dispose(e) : new Promise<void>((res) => (e.onIdle = () => void dispose(e).then(res))))));
    },
    appNames: () => live().map((e) => e.app!.name),
  };
}
