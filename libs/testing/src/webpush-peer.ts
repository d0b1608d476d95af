import http from "node:http";
import https from "node:https";
import { randomUUID, type ECDH } from "node:crypto";
import type { AddressInfo } from "node:net";
import { peerTls } from "./tls";
import { decodeJwt, p256PublicKeyFromRaw, verifyJwtSignature } from "./jwt";
import { decryptAes128gcm } from "./ece";
import { makeWebPushSubscription, type TestWebPushSubscription } from "./credentials";

/**
 * A local push service (RFC 8030) for Web Push: it hands out browser-like subscriptions whose
 * private keys it keeps, then for every `POST /push/{id}` checks the VAPID authorization (RFC 8292:
 * `vapid t=<ES256 JWT>, k=<public key>`, aud = this origin, exp within 24 h, sub present),
 * the TTL/Urgency headers and the `aes128gcm` body, which it decrypts (RFC 8291) and records.
 * Answers like the browser push services: 201 Created, 404 unknown, 410 Gone (unsubscribed),
 * 400/401/403/413, 429 with Retry-After.
 */

export interface WebPushReceived {
  id: string;
  endpoint: string;
  /** Decrypted plaintext. */
  payload: string;
  ttl: number;
  urgency: string | undefined;
  topic: string | undefined;
  vapid: { publicKey: string; sub: string; aud: string; exp: number };
  at: number;
}

export interface WebPushPeerOptions {
  record?: boolean;
  /** Decrypt and verify 1 message in N (default 1: all); the others get header checks only. Benchmarks. */
  verifyEvery?: number;
  /** Serve plain http (a push service an operator lists in WEBPUSH_ALLOWED_HOSTS on a private network). */
  plainHttp?: boolean;
}

export interface WebPushPeerStats {
  requests: number;
  accepted: number;
  verified: number;
  byStatus: Record<number, number>;
}

export interface WebPushPeer {
  origin: string;
  /** `host:port` to put in WEBPUSH_ALLOWED_HOSTS (the peer listens on 127.0.0.1). */
  host: string;
  ca: string;
  /** A new subscription on this service; pass the app's VAPID public key to bind it as a browser would. */
  subscribe(opts?: { applicationServerKey?: string }): TestWebPushSubscription & { id: string };
  /** The subscription is gone: later pushes get 410. */
  unsubscribe(endpoint: string): void;
  failSubscription(endpoint: string, status: number, opts?: { times?: number; retryAfterSec?: number }): void;
  storm(count: number, opts?: { status?: number; retryAfterSec?: number }): void;
  readonly received: WebPushReceived[];
  readonly stats: WebPushPeerStats;
  close(): Promise<void>;
}

interface Sub {
  privateKey: ECDH;
  authSecret: string;
  applicationServerKey?: string;
  gone: boolean;
}

const URGENCIES = new Set(["very-low", "low", "normal", "high"]);

export async function startWebPushPeer(opts: WebPushPeerOptions = {}): Promise<WebPushPeer> {
  const tls = peerTls();
  const record = opts.record ?? true;
  const every = Math.max(1, opts.verifyEvery ?? 1);
  const subs = new Map<string, Sub>();
  const failures = new Map<string, { status: number; remaining: number; retryAfterSec?: number }>();
  let storm = { left: 0, status: 429, retryAfterSec: undefined as number | undefined };
  const received: WebPushReceived[] = [];
  const stats: WebPushPeerStats = { requests: 0, accepted: 0, verified: 0, byStatus: {} };
  // A VAPID JWT is signed once and reused; verify each distinct one once, as push services cache it.
  const vapidOk = new Map<string, { publicKey: string; sub: string; aud: string; exp: number }>();
  let origin = "";

  type Reply = { status: number; headers?: Record<string, string>; body?: string };
  const err = (status: number, message: string, headers?: Record<string, string>): Reply => ({ status, headers, body: JSON.stringify({ code: status, errno: status, error: message }) });

  function vapid(header: string | undefined): { ok: true; v: { publicKey: string; sub: string; aud: string; exp: number } } | { ok: false; res: Reply } {
    const m = /^vapid\s+(.+)$/i.exec(header ?? "");
    if (!m) return { ok: false, res: err(401, "missing VAPID authorization") };
    const params = Object.fromEntries(m[1].split(",").map((p) => p.trim().split("=")).filter((kv) => kv.length === 2).map(([k, v]) => [k.trim(), v.trim()]));
    const t = params.t;
    const k = params.k;
    if (!t || !k) return { ok: false, res: err(401, "VAPID t= and k= required") };
    const cacheKey = `${t}|${k}`;
    let v = vapidOk.get(cacheKey);
    if (!v) {
      const jwt = decodeJwt(t);
      let key;
      try {
        key = p256PublicKeyFromRaw(Buffer.from(k, "base64url"));
      } catch {
        return { ok: false, res: err(401, "k is not a P-256 public key") };
      }
      if (!jwt || !verifyJwtSignature(jwt, "ES256", key)) return { ok: false, res: err(401, "VAPID JWT signature invalid") };
      const { aud, exp, sub } = jwt.payload as Record<string, unknown>;
      if (aud !== origin) return { ok: false, res: err(401, "VAPID aud is not the push service origin") };
      if (typeof sub !== "string" || !/^(mailto:|https:)/.test(sub)) return { ok: false, res: err(401, "VAPID sub must be a mailto: or https: URL") };
      if (typeof exp !== "number") return { ok: false, res: err(401, "VAPID exp missing") };
      v = { publicKey: k, sub, aud, exp };
      vapidOk.set(cacheKey, v);
    }
    const now = Date.now() / 1000;
    if (v.exp <= now || v.exp > now + 24 * 3600 + 60) return { ok: false, res: err(401, "VAPID exp must be in the next 24 hours") };
    return { ok: true, v };
  }

  function handle(method: string, path: string, h: Record<string, string | string[] | undefined>, body: Buffer): Reply {
    stats.requests++;
    if (method !== "POST") return err(405, "method not allowed");
    const m = /^\/push\/([\w-]+)$/.exec(path);
    const id = m?.[1] ?? "";
    const sub = subs.get(id);
    if (!sub) return err(404, "subscription not found");
    if (sub.gone) return err(410, "subscription expired");
    const ttlRaw = String(h.ttl ?? "");
    if (!/^\d+$/.test(ttlRaw)) return err(400, "TTL header required");
    const urgency = h.urgency as string | undefined;
    if (urgency !== undefined && !URGENCIES.has(urgency)) return err(400, "invalid Urgency");
    const auth = vapid(h.authorization as string | undefined);
    if (!auth.ok) return auth.res;
    if (sub.applicationServerKey && sub.applicationServerKey !== auth.v.publicKey) return err(403, "VAPID key does not match the subscription's applicationServerKey");
    if (h["content-encoding"] !== "aes128gcm") return err(415, "Content-Encoding must be aes128gcm");
    if (body.length > 4096) return err(413, "payload too large");
    if (body.length === 0) return err(400, "empty body");
    if (storm.left > 0) {
      storm.left--;
      return err(storm.status, "too many requests", storm.retryAfterSec !== undefined ? { "retry-after": String(storm.retryAfterSec) } : undefined);
    }
    const endpoint = `${origin}/push/${id}`;
    const f = failures.get(endpoint);
    if (f && f.remaining > 0) {
      f.remaining--;
      return err(f.status, "failure requested by the test", f.retryAfterSec !== undefined ? { "retry-after": String(f.retryAfterSec) } : undefined);
    }
    let payload = "";
    if ((stats.accepted + 1) % every === 0 || every === 1) {
      try {
        payload = decryptAes128gcm(body, sub.privateKey, sub.authSecret).toString("utf8");
      } catch (e) {
        return err(400, `cannot decrypt: ${(e as Error).message}`);
      }
      stats.verified++;
    }
    stats.accepted++;
    if (record) {
      received.push({ id, endpoint, payload, ttl: Number(ttlRaw), urgency, topic: h.topic as string | undefined, vapid: auth.v, at: Date.now() });
    }
    return { status: 201, headers: { location: `${origin}/m/${randomUUID()}` } };
  }

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= 8192) chunks.push(c);
    });
    req.on("end", () => {
      const r = size > 8192 ? err(413, "payload too large") : handle(req.method ?? "", req.url ?? "", req.headers, Buffer.concat(chunks));
      stats.byStatus[r.status] = (stats.byStatus[r.status] ?? 0) + 1;
      res.writeHead(r.status, { "content-type": "application/json", ...r.headers });
      res.end(r.body ?? "");
    });
  };
  const server = opts.plainHttp ? http.createServer({ keepAlive: true }, onRequest) : https.createServer({ key: tls.key, cert: tls.cert, keepAlive: true }, onRequest);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  origin = `${opts.plainHttp ? "http" : "https"}://127.0.0.1:${port}`;

  return {
    origin,
    host: `127.0.0.1:${port}`,
    ca: tls.cert,
    subscribe(o = {}) {
      const id = randomUUID();
      const s = makeWebPushSubscription(`${origin}/push/${id}`);
      subs.set(id, { privateKey: s.privateKey, authSecret: s.authSecret, applicationServerKey: o.applicationServerKey, gone: false });
      return { ...s, id };
    },
    unsubscribe(endpoint) {
      const s = subs.get(endpoint.split("/").pop() ?? "");
      if (s) s.gone = true;
    },
    failSubscription(endpoint, status, o = {}) {
      failures.set(endpoint, { status, remaining: o.times ?? Infinity, retryAfterSec: o.retryAfterSec });
    },
    storm(count, o = {}) {
      storm = { left: count, status: o.status ?? 429, retryAfterSec: o.retryAfterSec };
    },
    received,
    stats,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections?.();
      }),
  };
}
