import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeVapidKeys, makeWebPushSubscription, startWebPushPeer, type WebPushPeer } from "@pushstack/testing";
import { createWebPushTransport } from "./webpush";
import { sendWithRetry } from "./retry";
import type { AppCredentials, SendItem } from "./types";

/** web-push's own encryption, VAPID and HTTPS requests against the push service peer, which decrypts. */

let peer: WebPushPeer;
let transport: ReturnType<typeof createWebPushTransport>;
let vapid: { publicKey: string; privateKey: string };
let creds: AppCredentials;
let appSeq = 3000;

beforeAll(async () => {
  peer = await startWebPushPeer();
  vapid = makeVapidKeys();
  creds = { appId: appSeq++, version: "v1", webpush: { ...vapid, subject: "mailto:ops@pushstack.test" } };
  transport = createWebPushTransport({ allowedHosts: [peer.host], ca: peer.ca, ttlSeconds: 3600, urgency: "high" });
});
afterAll(async () => {
  await transport.close();
  await peer.close();
});

const asItems = (subs: object[], extra: Partial<SendItem["content"]> = {}): SendItem[] =>
  subs.map((s, i) => ({ recipient: { device_id: i + 1, token: JSON.stringify(s) }, content: { msg_id: `w-${i}-${Math.random()}`, title: `T${i}`, body: `B${i}`, ...extra } }));
const gotFor = (endpoint: string) => peer.received.filter((r) => r.endpoint === endpoint);

describe("Web Push transport through web-push", () => {
  test("the peer decrypts the contract's JSON; VAPID, TTL and Urgency as configured", async () => {
    const s = peer.subscribe({ applicationServerKey: vapid.publicKey });
    const res = await transport.send(creds, asItems([s.subscription], { icon_url: "https://cdn.example/i.png", click_url: "https://offer.example/" }));
    expect(res).toEqual([{ ok: true }]);
    const [r] = gotFor(s.subscription.endpoint);
    expect(JSON.parse(r.payload)).toEqual({ msg_id: expect.stringMatching(/^w-0-/), title: "T0", body: "B0", icon_url: "https://cdn.example/i.png", click_url: "https://offer.example/" });
    expect(r.ttl).toBe(3600);
    expect(r.urgency).toBe("high");
    expect(r.vapid).toMatchObject({ publicKey: vapid.publicKey, sub: "mailto:ops@pushstack.test", aud: peer.origin });
    expect(r.vapid.exp - Date.now() / 1000).toBeGreaterThan(11 * 3600);
  });

  test("one gone subscription among good ones: 410 marks only it invalid; 404 too", async () => {
    const subs = Array.from({ length: 25 }, () => peer.subscribe());
    peer.unsubscribe(subs[9].subscription.endpoint);
    const unknown = makeWebPushSubscription(`${peer.origin}/push/never-existed`);
    const res = await transport.send(creds, asItems([...subs.map((s) => s.subscription), unknown.subscription]));
    res.forEach((r, i) => {
      if (i === 9) expect(r).toEqual({ ok: false, retryable: false, reason: "http_410", tokenInvalid: true });
      else if (i === 25) expect(r).toEqual({ ok: false, retryable: false, reason: "http_404", tokenInvalid: true });
      else expect(r).toEqual({ ok: true });
    });
    subs.forEach((s, i) => expect(gotFor(s.subscription.endpoint).length).toBe(i === 9 ? 0 : 1));
  });

  test("429 carries Retry-After, 5xx is retryable, 413 and 403 are permanent", async () => {
    const [a, b, c, d] = [peer.subscribe(), peer.subscribe(), peer.subscribe(), peer.subscribe()];
    peer.failSubscription(a.subscription.endpoint, 429, { retryAfterSec: 4 });
    peer.failSubscription(b.subscription.endpoint, 502);
    peer.failSubscription(c.subscription.endpoint, 413);
    const other = makeVapidKeys().publicKey;
    const bound = peer.subscribe({ applicationServerKey: other }); // subscribed with another app's key
    const res = await transport.send(creds, asItems([a, b, c, bound].map((s) => s.subscription)));
    expect(res).toEqual([
      { ok: false, retryable: true, reason: "http_429", tokenInvalid: false, retryAfterMs: 4000 },
      { ok: false, retryable: true, reason: "http_502", tokenInvalid: false },
      { ok: false, retryable: false, reason: "payload_too_large", tokenInvalid: false },
      { ok: false, retryable: false, reason: "http_403", tokenInvalid: false },
    ]);
    expect(await transport.send(creds, asItems([d.subscription]))).toEqual([{ ok: true }]);
  });

  test("a 429 storm that ends: withRetry waits Retry-After and delivers every message once", async () => {
    const subs = Array.from({ length: 12 }, () => peer.subscribe());
    peer.storm(18, { retryAfterSec: 1 });
    const waits: number[] = [];
    const res = await sendWithRetry(transport, creds, asItems(subs.map((s) => s.subscription)), { sleep: (ms) => (waits.push(ms), Bun.sleep(ms)) });
    expect(res.every((r) => r.ok)).toBe(true);
    expect(waits.length).toBe(2);
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(1000);
    for (const s of subs) expect(gotFor(s.subscription.endpoint).length).toBe(1);
  });

  test("SSRF guard: unlisted, private and metadata endpoints are refused before any request", async () => {
    const other = createWebPushTransport({ allowedHosts: [], ca: peer.ca });
    const before = peer.stats.requests;
    const endpoints = [
      `${peer.origin}/push/x`, // loopback, not listed in this transport
      "https://169.254.169.254/latest/meta-data/iam",
      "http://fcm.googleapis.com/fcm/send/x",
      "https://10.0.0.8/push",
      "https://push.evil.example/x",
    ];
    const res = await other.send(creds, asItems(endpoints.map((e) => makeWebPushSubscription(e).subscription)));
    expect(res.every((r) => !r.ok && !r.retryable && !r.tokenInvalid && r.reason === "endpoint_refused")).toBe(true);
    expect(peer.stats.requests).toBe(before);
    await other.close();
  });

  test("SSRF guard on DNS: a push service name that resolves to a private address is refused, no request made", async () => {
    const rebound = createWebPushTransport({
      ca: peer.ca,
      resolve: (host, _o, cb) => cb(null, [{ address: host === "updates.push.services.mozilla.com" ? "127.0.0.1" : "169.254.169.254", family: 4 }]),
    });
    const endpoints = ["https://updates.push.services.mozilla.com/wpush/v2/x", "https://fcm.googleapis.com/fcm/send/y"];
    const res = await rebound.send(creds, asItems(endpoints.map((e) => makeWebPushSubscription(e).subscription)));
    expect(res).toEqual(endpoints.map(() => ({ ok: false, retryable: false, reason: "endpoint_refused", tokenInvalid: false })));
    await rebound.close();
  });

  test("plain http only to a listed host", async () => {
    const plain = await startWebPushPeer({ plainHttp: true });
    const listed = createWebPushTransport({ allowedHosts: [plain.host] });
    const unlisted = createWebPushTransport({ allowedHosts: [] });
    const s = plain.subscribe();
    expect(await listed.send(creds, asItems([s.subscription]))).toEqual([{ ok: true }]);
    expect(JSON.parse(plain.received[0].payload).title).toBe("T0");
    expect(await unlisted.send(creds, asItems([s.subscription]))).toMatchObject([{ ok: false, reason: "endpoint_refused" }]);
    plain.unsubscribe(s.subscription.endpoint);
    expect(await listed.send(creds, asItems([s.subscription]))).toEqual([{ ok: false, retryable: false, reason: "http_410", tokenInvalid: true }]);
    expect(plain.stats.requests).toBe(2);
    await Promise.all([listed.close(), unlisted.close(), plain.close()]);
  });

  test("malformed subscriptions are invalid tokens; bad VAPID keys are invalid credentials", async () => {
    const good = peer.subscribe().subscription;
    const bad = [
      "not json", "{}", JSON.stringify({ endpoint: good.endpoint }), JSON.stringify({ ...good, keys: { p256dh: "AAAA", auth: good.keys.auth } }),
      JSON.stringify({ ...good, keys: { p256dh: good.keys.p256dh, auth: "c2hvcnQ" } }),
    ];
    const res = await transport.send(creds, bad.map((token, i) => ({ recipient: { device_id: i, token }, content: { msg_id: `x${i}`, title: "t", body: "b" } })));
    expect(res.every((r) => !r.ok && r.tokenInvalid && r.reason === "invalid_subscription")).toBe(true);
    const broken = { appId: appSeq++, version: "1", webpush: { publicKey: "nope", privateKey: "nope", subject: "mailto:a@b.c" } };
    expect(await transport.send(broken, asItems([good]))).toEqual([{ ok: false, retryable: false, reason: "invalid_credentials", tokenInvalid: false }]);
  });

  test("VAPID keys rotated while sending: each request signed with its job's keys", async () => {
    const appId = appSeq++;
    const v2 = makeVapidKeys();
    const subs1 = Array.from({ length: 40 }, () => peer.subscribe());
    const subs2 = Array.from({ length: 40 }, () => peer.subscribe());
    const c1 = { appId, version: "v1", webpush: { ...vapid, subject: "mailto:ops@pushstack.test" } };
    const c2 = { appId, version: "v2", webpush: { ...v2, subject: "mailto:ops@pushstack.test" } };
    const [r1, r2] = await Promise.all([
      transport.send(c1, asItems(subs1.map((s) => s.subscription))),
      transport.send(c2, asItems(subs2.map((s) => s.subscription))),
    ]);
    expect([...r1, ...r2].every((r) => r.ok)).toBe(true);
    expect(subs1.every((s) => gotFor(s.subscription.endpoint)[0].vapid.publicKey === vapid.publicKey)).toBe(true);
    expect(subs2.every((s) => gotFor(s.subscription.endpoint)[0].vapid.publicKey === v2.publicKey)).toBe(true);
  });
});
