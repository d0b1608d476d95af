import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeApnsDeviceToken, makeApnsKey, startApnsPeer, type ApnsPeer, type TestApnsKey } from "@pushstack/testing";
import { createApnsTransport } from "./apns";
import { sendWithRetry } from "./retry";
import type { AppCredentials, SendItem } from "./types";

/** @parse/node-apn's own HTTP/2 traffic against the APNs peer (Apple's host kept as TLS name and :authority). */

const BUNDLE = "com.example.casino";
let peer: ApnsPeer;
let key: TestApnsKey;
let transport: ReturnType<typeof createApnsTransport>;
let appSeq = 2000;

const credsFor = (k: TestApnsKey, production = false, appId = appSeq++, version = "v1"): AppCredentials => ({
  appId, version, apns: { keyP8: k.keyP8, keyId: k.keyId, teamId: k.teamId, bundleId: BUNDLE, production },
});
const items = (tokens: string[], extra: Partial<SendItem["content"]> = {}): SendItem[] =>
  tokens.map((token, i) => ({ recipient: { device_id: i + 1, token }, content: { msg_id: `m-${token.slice(0, 6)}`, title: `T${i}`, body: `B${i}`, ...extra } }));
const got = (token: string) => peer.notifications.filter((n) => n.token === token);

beforeAll(async () => {
  peer = await startApnsPeer();
  key = makeApnsKey();
  peer.addKey({ ...key, bundleIds: [BUNDLE] });
  transport = createApnsTransport({ connectTo: peer.connectTo, ca: peer.ca });
});
afterAll(async () => {
  await transport.close();
  await peer.close();
});

describe("APNs transport through node-apn", () => {
  test("an alert with the contract's keys, topic = bundle id, push type alert, to the app's environment", async () => {
    const [s, p] = [makeApnsDeviceToken(), makeApnsDeviceToken()];
    peer.setDeviceEnvironment(s, "sandbox");
    peer.setDeviceEnvironment(p, "production");
    expect(await transport.send(credsFor(key, false), items([s], { image_url: "https://cdn.example/b.jpg" }))).toEqual([{ ok: true }]);
    expect(await transport.send(credsFor(key, true), items([p]))).toEqual([{ ok: true }]);
    const [n] = got(s);
    expect(n).toMatchObject({ environment: "sandbox", topic: BUNDLE, pushType: "alert", priority: "10", keyId: key.keyId, teamId: key.teamId });
    expect(n.payload).toEqual({
      msg_id: `m-${s.slice(0, 6)}`, title: "T0", body: "B0", image_url: "https://cdn.example/b.jpg",
      aps: { alert: { title: "T0", body: "B0" }, sound: "default", "mutable-content": 1 },
    });
    expect(Number(n.expiration)).toBeGreaterThan(Date.now() / 1000);
    expect(got(p)[0].environment).toBe("production");
  });

  test("a sandbox token sent to production is a BadDeviceToken: token invalid", async () => {
    const t = makeApnsDeviceToken();
    peer.setDeviceEnvironment(t, "sandbox");
    expect(await transport.send(credsFor(key, true), items([t]))).toEqual([{ ok: false, retryable: false, reason: "BadDeviceToken", tokenInvalid: true }]);
  });

  test("one bad token among good ones: 410 Unregistered only for it, the rest delivered once", async () => {
    const creds = credsFor(key);
    const tokens = Array.from({ length: 50 }, makeApnsDeviceToken);
    peer.failToken(tokens[3], 410, "Unregistered");
    const res = await transport.send(creds, items(tokens));
    res.forEach((r, i) => expect(r).toEqual(i === 3 ? { ok: false, retryable: false, reason: "Unregistered", tokenInvalid: true } : { ok: true }));
    tokens.forEach((t, i) => expect(got(t).length).toBe(i === 3 ? 0 : 1));
  });

  test("malformed device tokens are refused locally, never put in a request path", async () => {
    const before = peer.stats.requests;
    const res = await transport.send(credsFor(key), items(["../../3/device/x", "abc", "g".repeat(64), ""]));
    expect(res.every((r) => !r.ok && r.tokenInvalid && r.reason === "invalid_token")).toBe(true);
    expect(peer.stats.requests).toBe(before);
  });

  test("429, 500 and 503 are retryable; TopicDisallowed and a revoked key are permanent", async () => {
    const creds = credsFor(key);
    const [a, b, c] = [makeApnsDeviceToken(), makeApnsDeviceToken(), makeApnsDeviceToken()];
    peer.failToken(a, 429, "TooManyRequests");
    peer.failToken(c, 503, "ServiceUnavailable");
    expect(await transport.send(creds, items([a, c]))).toEqual([
      { ok: false, retryable: true, reason: "TooManyRequests", tokenInvalid: false },
      { ok: false, retryable: true, reason: "ServiceUnavailable", tokenInvalid: false },
    ]);
    // node-apn drops the body of a 500 and closes its connection (the next send reconnects).
    peer.failToken(b, 500, "InternalServerError");
    expect(await transport.send(creds, items([b]))).toEqual([{ ok: false, retryable: true, reason: "http_500", tokenInvalid: false }]);
    expect(await transport.send(creds, items([makeApnsDeviceToken()]))).toEqual([{ ok: true }]);
    const wrongTopic = { ...credsFor(key), apns: { ...credsFor(key).apns!, bundleId: "com.other.app" } };
    expect(await transport.send(wrongTopic, items([makeApnsDeviceToken()]))).toEqual([{ ok: false, retryable: false, reason: "TopicDisallowed", tokenInvalid: false }]);
    const stranger = makeApnsKey(key.teamId); // never registered with the peer
    expect(await transport.send(credsFor(stranger), items([makeApnsDeviceToken()]))).toEqual([{ ok: false, retryable: false, reason: "InvalidProviderToken", tokenInvalid: false }]);
  });

  test("a 429 storm that ends: withRetry delivers everything with backoff", async () => {
    const creds = credsFor(key);
    const tokens = Array.from({ length: 20 }, makeApnsDeviceToken);
    await transport.send(creds, items([makeApnsDeviceToken()])); // connection up before the storm
    peer.storm(30);
    const waits: number[] = [];
    const res = await sendWithRetry(transport, creds, items(tokens), {
      policy: { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 5000 },
      sleep: (ms) => (waits.push(ms), Bun.sleep(ms)),
    });
    expect(res.every((r) => r.ok)).toBe(true);
    expect(waits.length).toBe(2);
    for (const t of tokens) expect(got(t).length).toBe(1);
  });

  test("credentials rotated while sending: the new key signs at once, the old provider is shut down after", async () => {
    const appId = appSeq++;
    const key2 = makeApnsKey(key.teamId);
    peer.addKey({ ...key2, bundleIds: [BUNDLE] });
    const t1 = Array.from({ length: 300 }, makeApnsDeviceToken);
    const t2 = Array.from({ length: 300 }, makeApnsDeviceToken);
    const before = transport.providerCount();
    const p1 = transport.send(credsFor(key, false, appId, "v1"), items(t1));
    const p2 = transport.send(credsFor(key2, false, appId, "v2"), items(t2));
    expect(transport.providerCount()).toBe(before + 2); // both alive while p1 is in flight
    const [r1, r2] = await Promise.all([p1, p2]);
    expect([...r1, ...r2].every((r) => r.ok)).toBe(true);
    expect(t1.every((t) => got(t)[0]?.keyId === key.keyId)).toBe(true);
    expect(t2.every((t) => got(t)[0]?.keyId === key2.keyId)).toBe(true);
    expect(transport.providerCount()).toBe(before + 1);
  });

  test("a request APNs never answers times out as retryable, without holding up the rest", async () => {
    const t = createApnsTransport({ connectTo: peer.connectTo, ca: peer.ca, requestTimeoutMs: 300 });
    const [slow, fast] = [makeApnsDeviceToken(), makeApnsDeviceToken()];
    peer.hangToken(slow);
    const t0 = Date.now();
    const res = await t.send(credsFor(key), items([slow, fast]));
    expect(res).toEqual([{ ok: false, retryable: true, reason: "timeout", tokenInvalid: false }, { ok: true }]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    await t.close();
  });

  test("several connections per app: node-apn's MultiProvider spreads the requests", async () => {
    const t = createApnsTransport({ connectTo: peer.connectTo, ca: peer.ca, connectionsPerApp: 3 });
    const before = peer.stats.connections;
    const tokens = Array.from({ length: 30 }, makeApnsDeviceToken);
    expect((await t.send(credsFor(key), items(tokens))).every((r) => r.ok)).toBe(true);
    expect(peer.stats.connections - before).toBe(3);
    expect(tokens.every((tk) => got(tk).length === 1)).toBe(true);
    await t.close();
  });

  test("a .p8 that is not a key is classified, not thrown", async () => {
    const res = await transport.send({ appId: appSeq++, version: "1", apns: { keyP8: "garbage", keyId: "K", teamId: "T", bundleId: BUNDLE, production: false } }, items([makeApnsDeviceToken()]));
    expect(res).toEqual([{ ok: false, retryable: false, reason: "invalid_credentials", tokenInvalid: false }]);
  });
});
