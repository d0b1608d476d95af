import https from "node:https";
import { createPublicKey, randomBytes, type KeyObject } from "node:crypto";
import type { AddressInfo } from "node:net";
import { peerTls } from "./tls";
import { decodeJwt, verifyJwtSignature } from "./jwt";
import { startH2Server } from "./h2/server";

/**
 * A local stand-in for Google's FCM HTTP v1 API and OAuth 2.0 token endpoint.
 *
 * - `POST /v1/projects/{project}/messages:send` over HTTP/2 + TLS, bearer token required, with the
 *   server's own validation and Google's error bodies (`google.firebase.fcm.v1.FcmError` details).
 * - `POST /token` (HTTPS) implements the JWT-bearer grant: the RS256 assertion is verified against
 *   the public key of a service account registered with `addServiceAccount`.
 * The peer serves a certificate that names fcm.googleapis.com and oauth2.googleapis.com, so the
 * client keeps the real host as TLS name and `:authority`; it only connects to 127.0.0.1.
 */

export type FcmErrorCode =
  | "UNREGISTERED" | "INVALID_ARGUMENT" | "QUOTA_EXCEEDED" | "UNAVAILABLE" | "INTERNAL"
  | "SENDER_ID_MISMATCH" | "THIRD_PARTY_AUTH_ERROR";

export interface FcmPeerOptions {
  /** Keep every accepted message in `messages` (default true; benchmarks turn it off). */
  record?: boolean;
  /** Called for every accepted message (after all checks), e.g. for a benchmark's own uniqueness check. */
  onAccept?: (m: FcmReceived) => void;
  /** SETTINGS_MAX_CONCURRENT_STREAMS the peer advertises; FCM's is 100. */
  maxConcurrentStreams?: number;
  /** `expires_in` of issued access tokens, seconds. */
  tokenLifetimeSec?: number;
}

export interface FcmReceived {
  project: string;
  /** Service account whose access token authorised the request. */
  clientEmail: string;
  token: string;
  message: Record<string, any>;
  at: number;
}

export interface FcmPeerStats {
  sendRequests: number;
  accepted: number;
  byStatus: Record<number, number>;
  tokenGrants: number;
  tokenRejections: number;
  /** HTTP/2 connections accepted (firebase-admin opens one per sendEach call). */
  readonly connections: number;
}

export interface FcmPeer {
  /** Where a client's connection factory dials; the TLS name stays fcm.googleapis.com. */
  connectTo: { host: string; port: number };
  /** PEM to trust (self-signed). */
  ca: string;
  oauthTokenUrl: string;
  /** Trust a service account (its private key or public key): assertions it signs are accepted. */
  addServiceAccount(sa: { project_id: string; client_email: string; private_key?: string; public_key?: string }): void;
  /** Forget an account and revoke its access tokens (later requests get 401, grants invalid_grant). */
  removeServiceAccount(clientEmail: string): void;
  /** Answer `code` for this registration token, `times` times (default: always). */
  failToken(token: string, code: FcmErrorCode, opts?: { times?: number; retryAfterSec?: number }): void;
  /** The next `count` send requests, whatever their token, answer `code` (default QUOTA_EXCEEDED). */
  storm(count: number, opts?: { code?: FcmErrorCode; retryAfterSec?: number }): void;
  readonly messages: FcmReceived[];
  readonly stats: FcmPeerStats;
  close(): Promise<void>;
}

const FCM_ERROR_TYPE = "type.googleapis.com/google.firebase.fcm.v1.FcmError";
const BAD_REQUEST_TYPE = "type.googleapis.com/google.rpc.BadRequest";
const SCOPES_OK = ["https://www.googleapis.com/auth/firebase.messaging", "https://www.googleapis.com/auth/cloud-platform"];
const RESERVED_DATA_KEYS = new Set(["from", "notification", "message_type"]);

const ERRORS: Record<FcmErrorCode, { http: number; status: string; message: string }> = {
  UNREGISTERED: { http: 404, status: "NOT_FOUND", message: "Requested entity was not found." },
  INVALID_ARGUMENT: { http: 400, status: "INVALID_ARGUMENT", message: "The registration token is not a valid FCM registration token" },
  QUOTA_EXCEEDED: { http: 429, status: "RESOURCE_EXHAUSTED", message: "Quota exceeded for quota metric 'Send requests' and limit 'Send requests per minute per project'." },
  UNAVAILABLE: { http: 503, status: "UNAVAILABLE", message: "The service is currently unavailable." },
  INTERNAL: { http: 500, status: "INTERNAL", message: "Internal error encountered." },
  SENDER_ID_MISMATCH: { http: 403, status: "PERMISSION_DENIED", message: "SenderId mismatch" },
  THIRD_PARTY_AUTH_ERROR: { http: 401, status: "UNAUTHENTICATED", message: "Auth error from APNS or Web Push Service" },
};

interface Reply { status: number; body: unknown; headers?: Record<string, string> }
const JSON_HEADERS = Object.freeze({ "content-type": "application/json; charset=UTF-8" });

function fcmError(code: FcmErrorCode, retryAfterSec?: number, violation?: { field: string; description: string }): Reply {
  const e = ERRORS[code];
  const details: unknown[] = [{ "@type": FCM_ERROR_TYPE, errorCode: code }];
  if (code === "INVALID_ARGUMENT") {
    details.push({ "@type": BAD_REQUEST_TYPE, fieldViolations: [violation ?? { field: "message.token", description: e.message }] });
  }
  const message = violation?.description ?? e.message;
  const headers: Record<string, string> = {};
  if (retryAfterSec !== undefined) headers["retry-after"] = String(retryAfterSec);
  return { status: e.http, body: { error: { code: e.http, message, status: e.status, details } }, headers };
}

const invalid = (field: string, description: string) => fcmError("INVALID_ARGUMENT", undefined, { field, description });

/** The server-side checks FCM makes on a v1 message that our payloads could trip. */
function validateMessage(message: unknown, rawBytes: number): Reply | null {
  if (!message || typeof message !== "object" || Array.isArray(message)) return invalid("message", "Message must be an object");
  const m = message as Record<string, unknown>;
  const targets = ["token", "topic", "condition"].filter((k) => m[k] !== undefined);
  if (targets.length !== 1) return invalid("message", "Exactly one of token, topic or condition must be set");
  if (m.token !== undefined) {
    if (typeof m.token !== "string" || !/^[\w\-:.]{32,4096}$/.test(m.token)) return invalid("message.token", ERRORS.INVALID_ARGUMENT.message);
  }
  if (m.data !== undefined) {
    if (!m.data || typeof m.data !== "object" || Array.isArray(m.data)) return invalid("message.data", "Invalid value at 'message.data'");
    for (const k in m.data as Record<string, unknown>) {
      if (!Object.hasOwn(m.data, k)) continue;
      const v = (m.data as Record<string, unknown>)[k];
      if (typeof v !== "string") return invalid(`message.data[${k}].value`, `Invalid value at 'message.data[${k}].value' (TYPE_STRING)`);
      if (RESERVED_DATA_KEYS.has(k) || k.startsWith("google.") || k.startsWith("gcm.")) return invalid(`message.data[${k}]`, "Invalid data payload key");
    }
  }
  if (!fitsTrivially(m, rawBytes)) {
    const size = Buffer.byteLength(JSON.stringify({ data: m.data ?? {}, notification: m.notification ?? {} }));
    if (size > 4096) return invalid("message", "Message is too big");
  }
  return null;
}

/**
 * The size check without serialising, when its answer is certain: with no `notification` and string
 * data values (checked before), `{"data":D,"notification":{}}` is never longer than the request text
 * it was parsed from: JSON.stringify never writes a string, key or object longer than its source text
 * (escapes it writes, the source had to write too), and the text holds D's source plus
 * `{"message":{`, `"data":`, a target (`"token":"<32+ chars>"`, ...) and `}}`, more than the 27 bytes
 * of the wrapper (no data: 29 bytes in all). So a text of at most 4096 bytes passes; anything else is
 * measured exactly as before.
 */
function fitsTrivially(m: Record<string, unknown>, rawBytes: number): boolean {
  return rawBytes <= 4096 && m.notification === undefined;
}

export async function startFcmPeer(opts: FcmPeerOptions = {}): Promise<FcmPeer> {
  const tls = peerTls();
  const record = opts.record ?? true;
  const lifetime = opts.tokenLifetimeSec ?? 3600;
  const accounts = new Map<string, { project: string; key: KeyObject }>();
  const accessTokens = new Map<string, { clientEmail: string; project: string; exp: number }>();
  const failures = new Map<string, { code: FcmErrorCode; remaining: number; retryAfterSec?: number }>();
  let stormLeft = 0;
  let stormCode: FcmErrorCode = "QUOTA_EXCEEDED";
  let stormRetryAfter: number | undefined;
  const messages: FcmReceived[] = [];
  const stats = { sendRequests: 0, accepted: 0, byStatus: {} as Record<number, number>, tokenGrants: 0, tokenRejections: 0, get connections() { return h2?.connections ?? 0; } };

  // project of a request path (null: not the send method; an error: not percent-decodable, thrown where
  // decoding used to throw), by path: clients send the same few paths
  const projects = new Map<string, string | Error | null>();
  function projectOf(path: string): string | Error | null {
    let p = projects.get(path);
    if (p === undefined) {
      const match = /^\/v1\/projects\/([^/]+)\/messages:send$/.exec(path);
      try {
        p = match ? decodeURIComponent(match[1]) : null;
      } catch (err) {
        p = err as Error;
      }
      if (projects.size >= 1024) projects.clear();
      projects.set(path, p);
    }
    return p;
  }
  // message names: a per-peer random part and a counter, unique like Google's (no RNG call per message)
  const namePrefix = randomBytes(4).toString("hex");
  let nameSeq = 0;

  function handleSend(path: string, auth: string | undefined, rawBuf: Buffer): Reply {
    stats.sendRequests++;
    const project = projectOf(path);
    if (project === null) return { status: 404, body: { error: { code: 404, message: "Not Found", status: "NOT_FOUND" } } };
    const bearer = auth?.startsWith("Bearer ") ? accessTokens.get(auth.slice(7)) : undefined;
    if (!bearer || bearer.exp < Date.now()) {
      return {
        status: 401,
        headers: { "www-authenticate": 'Bearer realm="https://accounts.google.com/", error="invalid_token"' },
        body: { error: { code: 401, message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.", status: "UNAUTHENTICATED" } },
      };
    }
    if (project instanceof Error) throw project; // as before: the server answers 500
    if (bearer.project !== project) {
      return { status: 403, body: { error: { code: 403, message: `Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/${project}' (or it may not exist).`, status: "PERMISSION_DENIED" } } };
    }
    const raw = rawBuf.toString("utf8");
    // UTF-8 length of the text as decoded (an invalid byte became U+FFFD, 3 bytes): see fitsTrivially
    const rawBytes = Buffer.byteLength(raw);
    let body: any;
    try {
      body = JSON.parse(raw);
    } catch {
      return invalid("", "Invalid JSON payload received.");
    }
    const bad = validateMessage(body?.message, rawBytes);
    if (bad) return bad;
    if (stormLeft > 0) {
      stormLeft--;
      return fcmError(stormCode, stormRetryAfter);
    }
    const failure = failures.get(body.message.token);
    if (failure && failure.remaining > 0) {
      failure.remaining--;
      return fcmError(failure.code, failure.retryAfterSec);
    }
    stats.accepted++;
    if (record || opts.onAccept) {
      const m: FcmReceived = { project, clientEmail: bearer.clientEmail, token: body.message.token, message: body.message, at: Date.now() };
      if (record) messages.push(m);
      opts.onAccept?.(m);
    }
    nameSeq = (nameSeq + 1) >>> 0;
    return { status: 200, body: { name: `projects/${project}/messages/0:${Date.now()}%${namePrefix}${nameSeq.toString(16).padStart(8, "0")}` } };
  }

  function grantError(description: string, error = "invalid_grant"): Reply {
    stats.tokenRejections++;
    return { status: 400, body: { error, error_description: description } };
  }

  function handleToken(raw: string, contentType: string | undefined): Reply {
    if (!contentType?.startsWith("application/x-www-form-urlencoded")) return grantError("Bad Request", "invalid_request");
    const form = new URLSearchParams(raw);
    if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer") return grantError("Invalid grant_type", "unsupported_grant_type");
    const jwt = decodeJwt(form.get("assertion") ?? "");
    if (!jwt) return grantError("Invalid JWT: the assertion is not a JWT.");
    const iss = jwt.payload.iss;
    const account = typeof iss === "string" ? accounts.get(iss) : undefined;
    if (!account) return grantError("Invalid grant: account not found");
    if (!verifyJwtSignature(jwt, "RS256", account.key)) return grantError("Invalid JWT Signature.");
    const now = Math.floor(Date.now() / 1000);
    const { iat, exp, aud, scope } = jwt.payload as Record<string, unknown>;
    if (typeof iat !== "number" || typeof exp !== "number" || iat > now + 60 || exp <= now || exp - iat > 3600) {
      return grantError("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.");
    }
    if (aud !== peer.oauthTokenUrl && aud !== "https://oauth2.googleapis.com/token") return grantError("Invalid JWT: aud is not the token endpoint.");
    const scopes = typeof scope === "string" ? scope.split(" ") : [];
    if (!scopes.some((s) => SCOPES_OK.includes(s))) return grantError("Invalid OAuth scope or ID token audience provided.", "invalid_scope");
    const accessToken = `ya29.c.peer-${randomBytes(24).toString("base64url")}`;
    accessTokens.set(accessToken, { clientEmail: iss as string, project: account.project, exp: Date.now() + lifetime * 1000 });
    stats.tokenGrants++;
    return { status: 200, body: { access_token: accessToken, expires_in: lifetime, token_type: "Bearer" } };
  }

  // Our own HTTP/2 server, not node:http2: FCM accepts firebase-admin's `:scheme: https:`, nghttp2 and Bun reset it.
  const h2 = await startH2Server({
    key: tls.key,
    cert: tls.cert,
    maxConcurrentStreams: opts.maxConcurrentStreams ?? 100,
    handler: (req) => {
      const reply = req.method === "POST"
        ? handleSend(req.path, req.headers.authorization, req.body)
        : { status: 405, body: { error: { code: 405, message: "Method Not Allowed", status: "UNIMPLEMENTED" } } };
      stats.byStatus[reply.status] = (stats.byStatus[reply.status] ?? 0) + 1;
      return { status: reply.status, headers: reply.headers ? { ...JSON_HEADERS, ...reply.headers } : JSON_HEADERS, body: JSON.stringify(reply.body) };
    },
  });

  const oauth = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const reply = req.method === "POST" && req.url === "/token"
        ? handleToken(Buffer.concat(chunks).toString("utf8"), req.headers["content-type"])
        : { status: 404, body: { error: "not_found" } };
      res.writeHead(reply.status, { "content-type": "application/json; charset=utf-8" });
      res.end(JSON.stringify(reply.body));
    });
  });

  await new Promise<void>((r) => oauth.listen(0, "127.0.0.1", () => r()));
  const h2Port = h2.port;
  const oauthPort = (oauth.address() as AddressInfo).port;

  const peer: FcmPeer = {
    connectTo: { host: "127.0.0.1", port: h2Port },
    ca: tls.cert,
    oauthTokenUrl: `https://127.0.0.1:${oauthPort}/token`,
    addServiceAccount(sa) {
      const key = sa.public_key ? createPublicKey(sa.public_key) : createPublicKey(sa.private_key ?? "");
      accounts.set(sa.client_email, { project: sa.project_id, key });
    },
    removeServiceAccount(clientEmail) {
      accounts.delete(clientEmail);
      for (const [t, v] of accessTokens) if (v.clientEmail === clientEmail) accessTokens.delete(t);
    },
    failToken(token, code, o = {}) {
      failures.set(token, { code, remaining: o.times ?? Infinity, retryAfterSec: o.retryAfterSec });
    },
    storm(count, o = {}) {
      stormLeft = count;
      stormCode = o.code ?? "QUOTA_EXCEEDED";
      stormRetryAfter = o.retryAfterSec;
    },
    messages,
    stats,
    async close() {
      await Promise.all([
        h2.close(),
        new Promise<void>((r) => { oauth.close(() => r()); oauth.closeAllConnections?.(); }),
      ]);
    },
  };
  return peer;
}
