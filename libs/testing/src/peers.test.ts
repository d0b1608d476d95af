import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import http2 from "node:http2";
import tls from "node:tls";
import { createSign, randomUUID } from "node:crypto";
import webpush from "web-push";
import { makeApnsDeviceToken, makeApnsKey, makeFcmToken, makeServiceAccount, makeVapidKeys, makeWebPushSubscription } from "./credentials";
import { decryptAes128gcm, EceError } from "./ece";
import { startFcmPeer, type FcmPeer } from "./fcm-peer";
import { startApnsPeer, type ApnsPeer } from "./apns-peer";
import { startWebPushPeer, type WebPushPeer } from "./webpush-peer";

/**
 * The peers' own refusals, with hand-made requests: a peer that accepted anything would make
 * every transport test pass. (The happy paths run through the real libraries in apps/dispatcher.)
 */

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
function jwt(alg: "RS256" | "ES256", header: object, payload: object, pem: string): string {
  const input = `${b64({ alg, typ: "JWT", ...header })}.${b64(payload)}`;
  const sig = createSign("sha256").update(input).sign(alg === "ES256" ? { key: pem, dsaEncoding: "ieee-p1363" } : pem);
  return `${input}.${sig.toString("base64url")}`;
}

function h2(to: { host: string; port: number }, ca: string, servername: string) {
  const s = http2.connect(`https://${servername}`, {
    createConnection: () => tls.connect({ host: to.host, port: to.port, servername, ca, ALPNProtocols: ["h2"] }),
  } as http2.SecureClientSessionOptions);
  const call = (headers: http2.OutgoingHttpHeaders, body?: string) =>
    new Promise<{ status: number; json: any }>((resolve, reject) => {
      const req = s.request({ ":method": "POST", ...headers });
      let status = 0;
      let text = "";
      req.on("response", (h) => (status = Number(h[":status"])));
      req.on("data", (c) => (text += c));
      req.on("end", () => resolve({ status, json: text ? JSON.parse(text) : null }));
      req.on("error", reject);
      req.end(body);
    });
  return { call, close: () => s.close() };
}

describe("FCM peer", () => {
  let peer: FcmPeer;
  const sa = makeServiceAccount();
  beforeAll(async () => {
    peer = await startFcmPeer();
    peer.addServiceAccount(sa);
  });
  afterAll(() => peer.close());

  const grant = (assertion: string) =>
    fetch(peer.oauthTokenUrl, {
      method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion }), tls: { ca: peer.ca },
    } as RequestInit).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));
  const claims = (over: object = {}) => {
    const now = Math.floor(Date.now() / 1000);
    return { iss: sa.client_email, scope: "https://www.googleapis.com/auth/firebase.messaging", aud: peer.oauthTokenUrl, iat: now, exp: now + 3600, ...over };
  };

  test("OAuth: a valid RS256 assertion gets a token; a forged, expired or foreign one does not", async () => {
    expect((await grant(jwt("RS256", {}, claims(), sa.private_key))).json).toMatchObject({ token_type: "Bearer", expires_in: 3600 });
    const other = makeServiceAccount();
    expect((await grant(jwt("RS256", {}, claims(), other.private_key))).json).toEqual({ error: "invalid_grant", error_description: "Invalid JWT Signature." });
    expect((await grant(jwt("RS256", {}, claims({ exp: Math.floor(Date.now() / 1000) - 1 }), sa.private_key))).status).toBe(400);
    expect((await grant(jwt("RS256", {}, claims({ iss: other.client_email }), other.private_key))).json.error).toBe("invalid_grant");
    expect((await grant(jwt("RS256", {}, claims({ scope: "https://www.googleapis.com/auth/drive" }), sa.private_key))).json.error).toBe("invalid_scope");
  });

  test("messages:send: bearer, project and token checked, Google's error bodies", async () => {
    const { json } = await grant(jwt("RS256", {}, claims(), sa.private_key));
    const c = h2(peer.connectTo, peer.ca, "fcm.googleapis.com");
    const path = `/v1/projects/${sa.project_id}/messages:send`;
    const auth = { authorization: `Bearer ${json.access_token}`, "content-type": "application/json" };
    const msg = (token: string, extra = {}) => JSON.stringify({ message: { token, data: { a: "b" }, ...extra } });
    expect((await c.call({ ":path": path, ...auth }, msg(makeFcmToken()))).json.name).toMatch(new RegExp(`^projects/${sa.project_id}/messages/`));
    expect((await c.call({ ":path": path, authorization: "Bearer nope" }, msg(makeFcmToken()))).status).toBe(401);
    expect((await c.call({ ":path": "/v1/projects/other/messages:send", ...auth }, msg(makeFcmToken()))).status).toBe(403);
    const bad = await c.call({ ":path": path, ...auth }, msg("short"));
    expect(bad.status).toBe(400);
    expect(bad.json.error.details).toEqual([
      { "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", errorCode: "INVALID_ARGUMENT" },
      { "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ field: "message.token", description: expect.any(String) }] },
    ]);
    expect((await c.call({ ":path": path, ...auth }, msg(makeFcmToken(), { data: { n: 1 } }))).status).toBe(400);
    expect((await c.call({ ":path": path, ...auth }, msg(makeFcmToken(), { data: { "google.x": "y" } }))).status).toBe(400);
    const t = makeFcmToken();
    peer.failToken(t, "QUOTA_EXCEEDED", { times: 1, retryAfterSec: 9 });
    expect((await c.call({ ":path": path, ...auth }, msg(t))).json.error).toMatchObject({ code: 429, status: "RESOURCE_EXHAUSTED", details: [{ errorCode: "QUOTA_EXCEEDED" }] });
    expect((await c.call({ ":path": path, ...auth }, msg(t))).status).toBe(200); // times: 1
    c.close();
  });

  test("messages:send: data + notification over 4096 bytes is too big, however the request spells it", async () => {
    const { json } = await grant(jwt("RS256", {}, claims(), sa.private_key));
    const c = h2(peer.connectTo, peer.ca, "fcm.googleapis.com");
    const path = `/v1/projects/${sa.project_id}/messages:send`;
    const auth = { authorization: `Bearer ${json.access_token}`, "content-type": "application/json" };
    const send = (message: object) => c.call({ ":path": path, ...auth }, JSON.stringify({ message: { token: makeFcmToken(), ...message } }));
    // `{"data":{"v":"<x>"},"notification":{}}` is 35 + x bytes: 4096 is the last size accepted
    expect((await send({ data: { v: "x".repeat(4061) } })).status).toBe(200);
    const big = await send({ data: { v: "x".repeat(4062) } });
    expect(big.json.error).toMatchObject({ code: 400, message: "Message is too big" });
    expect((await send({ data: { v: "x".repeat(2000) }, notification: { title: "t".repeat(2100) } })).status).toBe(400);
    // a short request whose text is long once decoded: 1,400 invalid UTF-8 bytes are 1,400 U+FFFD (4,200 bytes)
    const head = Buffer.from(`{"message":{"token":"${makeFcmToken()}","data":{"v":"`);
    const raw = Buffer.concat([head, Buffer.alloc(1400, 0xff), Buffer.from(`"}}}`)]);
    expect(raw.length).toBeLessThan(4096);
    const decoded = await c.call({ ":path": path, ...auth }, raw as unknown as string);
    expect(decoded.json.error.message).toBe("Message is too big");
    c.close();
  });
});

describe("APNs peer", () => {
  let peer: ApnsPeer;
  const key = makeApnsKey();
  beforeAll(async () => {
    peer = await startApnsPeer();
    peer.addKey({ ...key, bundleIds: ["com.example.app"] });
  });
  afterAll(() => peer.close());

  const token = (iat = Math.floor(Date.now() / 1000), k = key) => jwt("ES256", { kid: k.keyId }, { iss: k.teamId, iat }, k.keyP8);
  const send = async (headers: http2.OutgoingHttpHeaders, body = JSON.stringify({ aps: { alert: "hi" } }), host = "api.sandbox.push.apple.com") => {
    const c = h2(peer.connectTo, peer.ca, host);
    try {
      return await c.call(headers, body);
    } finally {
      c.close();
    }
  };
  const ok = () => ({ ":path": `/3/device/${makeApnsDeviceToken()}`, authorization: `bearer ${token()}`, "apns-topic": "com.example.app", "apns-push-type": "alert" });

  test("accepts a well-formed alert and records its environment", async () => {
    expect((await send(ok())).status).toBe(200);
    expect((await send(ok(), undefined, "api.push.apple.com")).status).toBe(200);
    expect(peer.notifications.map((n) => n.environment)).toEqual(["sandbox", "production"]);
  });

  test("Apple's refusals: provider token, topic, device token, headers, payload", async () => {
    const cases: [http2.OutgoingHttpHeaders, number, string, string?][] = [
      [{ authorization: undefined }, 403, "MissingProviderToken"],
      [{ authorization: `bearer ${token(Math.floor(Date.now() / 1000) - 4000)}` }, 403, "ExpiredProviderToken"],
      [{ authorization: `bearer ${token(undefined, makeApnsKey(key.teamId))}` }, 403, "InvalidProviderToken"],
      [{ "apns-topic": undefined }, 400, "MissingTopic"],
      [{ "apns-topic": "com.other" }, 400, "TopicDisallowed"],
      [{ ":path": "/3/device/xyz" }, 400, "BadDeviceToken"],
      [{ "apns-push-type": "banner" }, 400, "InvalidPushType"],
      [{ "apns-priority": "7" }, 400, "BadPriority"],
      [{ "apns-id": "not-a-uuid" }, 400, "BadMessageId"],
      [{}, 400, "PayloadEmpty", "{}"],
      [{}, 413, "PayloadTooLarge", JSON.stringify({ aps: { alert: "x".repeat(5000) } })],
    ];
    for (const [over, status, reason, body] of cases) {
      const headers = Object.fromEntries(Object.entries({ ...ok(), ...over }).filter(([, v]) => v !== undefined));
      const r = await send(headers, body);
      expect({ reason, got: [r.status, r.json?.reason] }).toEqual({ reason, got: [status, reason] });
    }
    expect((await send({ ...ok(), "apns-id": randomUUID() })).status).toBe(200);
  });
});

describe("Web Push peer", () => {
  let peer: WebPushPeer;
  const vapid = makeVapidKeys();
  beforeAll(async () => {
    peer = await startWebPushPeer();
  });
  afterAll(() => peer.close());

  const post = (endpoint: string, headers: Record<string, string>, body: Buffer) =>
    fetch(endpoint, { method: "POST", headers, body, tls: { ca: peer.ca } } as RequestInit).then((r) => r.status);
  const details = (sub: object, aud = peer.origin) => {
    const d = webpush.generateRequestDetails(sub as any, "hello", { vapidDetails: { subject: "mailto:a@b.c", ...vapid } });
    const headers = Object.fromEntries(Object.entries(d.headers).map(([k, v]) => [k, String(v)]));
    if (aud !== peer.origin) headers.Authorization = webpush.getVapidHeaders(aud, "mailto:a@b.c", vapid.publicKey, vapid.privateKey, "aes128gcm").Authorization;
    return { headers, body: d.body as Buffer };
  };

  test("accepts and decrypts a correct request; refuses bad VAPID, headers or body", async () => {
    const s = peer.subscribe();
    const good = details(s.subscription);
    expect(await post(s.subscription.endpoint, good.headers, good.body)).toBe(201);
    expect(peer.received[0].payload).toBe("hello");
    const wrongAud = details(s.subscription, "https://other.example");
    expect(await post(s.subscription.endpoint, wrongAud.headers, wrongAud.body)).toBe(401);
    const { TTL, ...noTtl } = good.headers;
    expect(TTL).toBeDefined();
    expect(await post(s.subscription.endpoint, noTtl, good.body)).toBe(400);
    const tampered = Buffer.from(good.body);
    tampered[tampered.length - 1] ^= 1;
    expect(await post(s.subscription.endpoint, good.headers, tampered)).toBe(400);
    const { Authorization, ...noAuth } = good.headers;
    expect(Authorization).toMatch(/^vapid t=/);
    expect(await post(s.subscription.endpoint, noAuth, good.body)).toBe(401);
  });
});

describe("decryptAes128gcm", () => {
  test("reads what web-push encrypts for a subscription, and nothing encrypted for another", () => {
    const a = makeWebPushSubscription();
    const b = makeWebPushSubscription();
    const enc = webpush.encrypt(a.subscription.keys.p256dh, a.subscription.keys.auth, "Grüße 🎰", "aes128gcm");
    expect(decryptAes128gcm(enc.cipherText, a.privateKey, a.authSecret).toString("utf8")).toBe("Grüße 🎰");
    expect(() => decryptAes128gcm(enc.cipherText, b.privateKey, b.authSecret)).toThrow(EceError);
    expect(() => decryptAes128gcm(Buffer.alloc(10), a.privateKey, a.authSecret)).toThrow(EceError);
  });
});
