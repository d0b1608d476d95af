import { createPublicKey, randomUUID, type KeyObject } from "node:crypto";
import { peerTls } from "./tls";
import { decodeJwt, verifyJwtSignature } from "./jwt";
import { startH2Server, type H2Request, type H2Response } from "./h2/server";

/**
 * A local stand-in for Apple's APNs provider API (HTTP/2 over TLS, token authentication).
 *
 * `POST /3/device/{token}` with `authorization: bearer <ES256 JWT>` (kid = key id, iss = team id,
 * iat within the hour), `apns-topic` among the key's bundle ids, the header checks Apple makes,
 * and Apple's status codes with `{"reason": ...}` bodies. The environment is the `:authority`
 * the client used (api.push.apple.com or api.sandbox.push.apple.com), so a client that dials
 * 127.0.0.1 but keeps Apple's host as TLS name shows which environment it chose.
 */

export type ApnsEnvironment = "production" | "sandbox" | "unknown";

export interface ApnsReceived {
  token: string;
  environment: ApnsEnvironment;
  topic: string;
  pushType: string | undefined;
  priority: string | undefined;
  expiration: string | undefined;
  keyId: string;
  teamId: string;
  payload: Record<string, any>;
  at: number;
}

export interface ApnsPeerOptions {
  record?: boolean;
  maxConcurrentStreams?: number;
}

export interface ApnsPeerStats {
  requests: number;
  accepted: number;
  byStatus: Record<number, number>;
  readonly connections: number;
}

export interface ApnsPeer {
  connectTo: { host: string; port: number };
  ca: string;
  /** Trust a signing key (its .p8 or public key) for a team and the bundle ids (topics) it may push to. */
  addKey(k: { keyId: string; teamId: string; keyP8?: string; publicKey?: string; bundleIds: string[] }): void;
  revokeKey(keyId: string): void;
  /** Answer `status` + `reason` for this device token, `times` times (default: always). */
  failToken(token: string, status: number, reason: string, opts?: { times?: number }): void;
  /** The next `count` requests answer `status` + `reason` (default 429 TooManyRequests). */
  storm(count: number, opts?: { status?: number; reason?: string }): void;
  /** Requests for this device token are never answered (a hung APNs stream). */
  hangToken(token: string): void;
  /** The token exists only in this environment; sent to the other one it is a BadDeviceToken. */
  setDeviceEnvironment(token: string, env: "production" | "sandbox"): void;
  readonly notifications: ApnsReceived[];
  readonly stats: ApnsPeerStats;
  close(): Promise<void>;
}

const PUSH_TYPES = new Set(["alert", "background", "voip", "complication", "fileprovider", "mdm", "liveactivity", "location", "pushtotalk", "widgets", "controls"]);
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function startApnsPeer(opts: ApnsPeerOptions = {}): Promise<ApnsPeer> {
  const tls = peerTls();
  const record = opts.record ?? true;
  const keys = new Map<string, { teamId: string; key: KeyObject; bundleIds: Set<string> }>();
  // Apple verifies a provider token once and reuses the result while the token is valid.
  const verified = new Map<string, { keyId: string; teamId: string; iat: number }>();
  const failures = new Map<string, { status: number; reason: string; remaining: number }>();
  const environments = new Map<string, "production" | "sandbox">();
  const hung = new Set<string>();
  let storm = { left: 0, status: 429, reason: "TooManyRequests" };
  const notifications: ApnsReceived[] = [];
  let server: { connections: number } | null = null;
  const stats = { requests: 0, accepted: 0, byStatus: {} as Record<number, number>, get connections() { return server?.connections ?? 0; } };

  const reply = (status: number, reason?: string, extra: Record<string, unknown> = {}): H2Response =>
    reason === undefined
      ? { status, headers: { "apns-id": randomUUID() } }
      : { status, headers: { "apns-id": randomUUID(), "content-type": "application/json" }, body: JSON.stringify({ reason, ...extra }) };

  function authenticate(header: string | undefined): { ok: true; keyId: string; teamId: string } | { ok: false; res: H2Response } {
    if (!header?.toLowerCase().startsWith("bearer ")) return { ok: false, res: reply(403, "MissingProviderToken") };
    const token = header.slice(7).trim();
    let v = verified.get(token);
    if (!v) {
      const jwt = decodeJwt(token);
      const kid = jwt?.header.kid;
      const k = typeof kid === "string" ? keys.get(kid) : undefined;
      if (!jwt || !k || jwt.payload.iss !== k.teamId || typeof jwt.payload.iat !== "number" || !verifyJwtSignature(jwt, "ES256", k.key)) {
        return { ok: false, res: reply(403, "InvalidProviderToken") };
      }
      v = { keyId: kid as string, teamId: k.teamId, iat: jwt.payload.iat };
      verified.set(token, v);
    }
    if (!keys.has(v.keyId)) return { ok: false, res: reply(403, "InvalidProviderToken") };
    const age = Date.now() / 1000 - v.iat;
    if (age > 3600) return { ok: false, res: reply(403, "ExpiredProviderToken") };
    if (age < -300) return { ok: false, res: reply(403, "InvalidProviderToken") };
    return { ok: true, keyId: v.keyId, teamId: v.teamId };
  }

  function handle(req: H2Request): H2Response | null {
    stats.requests++;
    if (req.method !== "POST") return reply(405, "MethodNotAllowed");
    const m = /^\/3\/device\/([^/?]*)$/.exec(req.path);
    if (!m) return reply(404, "BadPath");
    const environment: ApnsEnvironment = /^api\.push\.apple\.com(:443)?$/.test(req.authority)
      ? "production"
      : /^api\.sandbox\.push\.apple\.com(:443)?$/.test(req.authority) ? "sandbox" : "unknown";
    const auth = authenticate(req.headers.authorization);
    if (!auth.ok) return auth.res;
    const h = req.headers;
    const topic = h["apns-topic"];
    if (!topic) return reply(400, "MissingTopic");
    if (!keys.get(auth.keyId)!.bundleIds.has(topic)) return reply(400, "TopicDisallowed");
    if (h["apns-push-type"] !== undefined && !PUSH_TYPES.has(h["apns-push-type"])) return reply(400, "InvalidPushType");
    if (h["apns-priority"] !== undefined && !["1", "5", "10"].includes(h["apns-priority"])) return reply(400, "BadPriority");
    if (h["apns-expiration"] !== undefined && !/^\d+$/.test(h["apns-expiration"])) return reply(400, "BadExpirationDate");
    if (h["apns-id"] !== undefined && !UUID_RE.test(h["apns-id"])) return reply(400, "BadMessageId");
    if (h["apns-collapse-id"] !== undefined && Buffer.byteLength(h["apns-collapse-id"]) > 64) return reply(400, "BadCollapseId");
    const token = decodeURIComponent(m[1]);
    if (!token) return reply(400, "MissingDeviceToken");
    if (!/^[0-9a-fA-F]{64,200}$/.test(token)) return reply(400, "BadDeviceToken");
    const env = environments.get(token);
    if (env && env !== environment) return reply(400, "BadDeviceToken");
    if (req.body.length > 4096) return reply(413, "PayloadTooLarge");
    let payload: any;
    try {
      payload = JSON.parse(req.body.toString("utf8"));
    } catch {
      payload = null;
    }
    if (!payload || typeof payload !== "object" || typeof payload.aps !== "object") return reply(400, "PayloadEmpty");
    if (hung.has(token)) return null;
    if (storm.left > 0) {
      storm.left--;
      return reply(storm.status, storm.reason);
    }
    const f = failures.get(token);
    if (f && f.remaining > 0) {
      f.remaining--;
      return f.status === 410 ? reply(410, f.reason, { timestamp: Date.now() }) : reply(f.status, f.reason);
    }
    stats.accepted++;
    if (record) {
      notifications.push({
        token, environment, topic, pushType: h["apns-push-type"], priority: h["apns-priority"], expiration: h["apns-expiration"],
        keyId: auth.keyId, teamId: auth.teamId, payload, at: Date.now(),
      });
    }
    const res = reply(200);
    if (environment === "sandbox") res.headers!["apns-unique-id"] = randomUUID();
    return res;
  }

  const h2 = await startH2Server({
    key: tls.key,
    cert: tls.cert,
    maxConcurrentStreams: opts.maxConcurrentStreams ?? 1000,
    maxBodyBytes: 8192,
    handler: (req) => {
      const res = handle(req);
      if (res) stats.byStatus[res.status] = (stats.byStatus[res.status] ?? 0) + 1;
      return res;
    },
  });
  server = h2;

  return {
    connectTo: { host: "127.0.0.1", port: h2.port },
    ca: tls.cert,
    addKey(k) {
      const key = k.publicKey ? createPublicKey(k.publicKey) : createPublicKey(k.keyP8 ?? "");
      keys.set(k.keyId, { teamId: k.teamId, key, bundleIds: new Set(k.bundleIds) });
    },
    revokeKey(keyId) {
      keys.delete(keyId);
    },
    failToken(token, status, reason, o = {}) {
      failures.set(token, { status, reason, remaining: o.times ?? Infinity });
    },
    storm(count, o = {}) {
      storm = { left: count, status: o.status ?? 429, reason: o.reason ?? "TooManyRequests" };
    },
    hangToken(token) {
      hung.add(token);
    },
    setDeviceEnvironment(token, env) {
      environments.set(token, env);
    },
    notifications,
    stats,
    close: () => h2.close(),
  };
}
