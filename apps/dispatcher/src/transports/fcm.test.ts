import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getApps } from "firebase-admin/app";
import { makeFcmToken, makeServiceAccount, startFcmPeer, type FcmPeer, type TestServiceAccount } from "@pushstack/testing";
import { createFcmTransport } from "./fcm";
import { sendWithRetry } from "./retry";
import type { AppCredentials, SendItem } from "./types";

/** firebase-admin's own HTTP/2 and OAuth traffic against the FCM peer; nothing of the library is replaced. */

let peer: FcmPeer;
let sa: TestServiceAccount;
let transport: ReturnType<typeof createFcmTransport>;
let creds: AppCredentials;
let appSeq = 1000;

beforeAll(async () => {
  peer = await startFcmPeer();
  sa = makeServiceAccount();
  peer.addServiceAccount(sa);
  transport = createFcmTransport({ connectTo: peer.connectTo, ca: peer.ca, oauthTokenUrl: peer.oauthTokenUrl });
  creds = { appId: appSeq++, version: "v1", fcm: { serviceAccount: sa } };
});
afterAll(async () => {
  await transport.close();
  await peer.close();
});

const items = (tokens: string[], extra: Partial<SendItem["content"]> = {}): SendItem[] =>
  tokens.map((token, i) => ({ recipient: { device_id: i + 1, token }, content: { msg_id: `msg-${token.slice(0, 8)}-${i}`, title: `T${i}`, body: `B${i}`, ...extra } }));
const received = (token: string) => peer.messages.filter((m) => m.token === token);

describe("FCM transport through firebase-admin", () => {
  test("delivers the contract's keys as data, authorised by the service account's own token", async () => {
    const token = makeFcmToken();
    const res = await transport.send(creds, items([token], { click_url: "https://offer.example/x", icon_url: null }));
    expect(res).toEqual([{ ok: true }]);
    const [m] = received(token);
    expect(m.project).toBe(sa.project_id);
    expect(m.clientEmail).toBe(sa.client_email);
    expect(m.message.data).toEqual({ msg_id: expect.stringMatching(/^msg-/), title: "T0", body: "B0", click_url: "https://offer.example/x" });
    expect(m.message.android).toEqual({ priority: "high", ttl: "86400s" });
    expect(peer.stats.tokenGrants).toBeGreaterThanOrEqual(1);
  });

  test("one bad token among good ones: only it fails, as UNREGISTERED, and nothing is sent twice", async () => {
    const tokens = Array.from({ length: 40 }, makeFcmToken);
    peer.failToken(tokens[17], "UNREGISTERED");
    const res = await transport.send(creds, items(tokens));
    res.forEach((r, i) => {
      if (i === 17) expect(r).toEqual({ ok: false, retryable: false, reason: "UNREGISTERED", tokenInvalid: true });
      else expect(r).toEqual({ ok: true });
    });
    for (const [i, t] of tokens.entries()) expect(received(t).length).toBe(i === 17 ? 0 : 1);
  });

  test("INVALID_ARGUMENT on the registration token marks it invalid; a malformed token never leaves", async () => {
    const bad = makeFcmToken();
    peer.failToken(bad, "INVALID_ARGUMENT");
    const before = peer.stats.sendRequests;
    const res = await transport.send(creds, items([bad, "not a token", ""]));
    expect(res[0]).toEqual({ ok: false, retryable: false, reason: "INVALID_ARGUMENT", tokenInvalid: true });
    expect(res[1]).toMatchObject({ ok: false, tokenInvalid: true, reason: "invalid_token" });
    expect(res[2]).toMatchObject({ ok: false, tokenInvalid: true, reason: "invalid_token" });
    expect(peer.stats.sendRequests - before).toBe(1);
  });

  test("QUOTA_EXCEEDED is retryable with the peer's Retry-After; INTERNAL (500) is retryable", async () => {
    const [q, i] = [makeFcmToken(), makeFcmToken()];
    peer.failToken(q, "QUOTA_EXCEEDED", { retryAfterSec: 7 });
    peer.failToken(i, "INTERNAL");
    const res = await transport.send(creds, items([q, i]));
    expect(res[0]).toEqual({ ok: false, retryable: true, reason: "QUOTA_EXCEEDED", tokenInvalid: false, retryAfterMs: 7000 });
    expect(res[1]).toMatchObject({ ok: false, retryable: true, reason: "INTERNAL", tokenInvalid: false });
  });

  test("a 429 storm that ends: withRetry delivers everything, no earlier than Retry-After", async () => {
    const tokens = Array.from({ length: 30 }, makeFcmToken);
    peer.storm(45, { retryAfterSec: 1 });
    const waits: number[] = [];
    const t0 = Date.now();
    const res = await sendWithRetry(transport, creds, items(tokens), {
      sleep: (ms) => (waits.push(ms), Bun.sleep(ms)),
    });
    expect(res.every((r) => r.ok)).toBe(true);
    expect(waits.length).toBe(2); // 30 fail, then 15 fail, then all pass
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(1000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2000);
    for (const t of tokens) expect(received(t).length).toBe(1);
  });

  test("more than 500 recipients go out in several sendEach calls, each on its own HTTP/2 session", async () => {
    const tokens = Array.from({ length: 1100 }, makeFcmToken);
    const conns = peer.stats.connections;
    const res = await transport.send(creds, items(tokens));
    expect(res.filter((r) => r.ok).length).toBe(1100);
    expect(peer.stats.connections - conns).toBe(3);
  });

  test("stays under the project's quota: sends wait for their share of the per-minute rate", async () => {
    // 1,200/min used at 95% is 19/s with one second of burst: 57 messages may not all leave before 2 s.
    const t = createFcmTransport({ connectTo: peer.connectTo, ca: peer.ca, oauthTokenUrl: peer.oauthTokenUrl, projectMessagesPerMinute: 1200, batchSize: 19 });
    const tokens = Array.from({ length: 57 }, makeFcmToken);
    const t0 = Date.now();
    const res = await t.send({ appId: appSeq++, version: "q", fcm: { serviceAccount: sa } }, items(tokens));
    const times = tokens.map((tk) => received(tk)[0].at - t0).sort((a, b) => a - b);
    expect(res.every((r) => r.ok)).toBe(true);
    expect(times[18]).toBeLessThan(900); // the burst goes at once
    expect(times[19]).toBeGreaterThanOrEqual(950); // the next 19 after a second
    expect(times[38]).toBeGreaterThanOrEqual(1950); // the last 19 after two
    await t.close();
  });

  test("credentials rotated while sending: no failure, new app used at once, old app deleted after", async () => {
    const appId = appSeq++;
    const sa2 = makeServiceAccount(sa.project_id);
    peer.addServiceAccount(sa2);
    const v1: AppCredentials = { appId, version: "v1", fcm: { serviceAccount: sa } };
    const v2: AppCredentials = { appId, version: "v2", fcm: { serviceAccount: sa2 } };
    const t1 = Array.from({ length: 600 }, makeFcmToken);
    const t2 = Array.from({ length: 600 }, makeFcmToken);
    const p1 = transport.send(v1, items(t1));
    const p2 = transport.send(v2, items(t2)); // rotation while p1's batches are in flight
    const [r1, r2] = await Promise.all([p1, p2]);
    expect([...r1, ...r2].every((r) => r.ok)).toBe(true);
    expect(t1.every((t) => received(t)[0]?.clientEmail === sa.client_email)).toBe(true);
    expect(t2.every((t) => received(t)[0]?.clientEmail === sa2.client_email)).toBe(true);
    await Bun.sleep(50); // deleteApp of the retired app runs right after its last batch
    const names = transport.appNames().filter((n) => n.includes(`-${appId}-`));
    expect(names.length).toBe(1);
    expect(getApps().map((a) => a.name)).toEqual(expect.arrayContaining(names));
    expect(getApps().some((a) => a.name === "[DEFAULT]")).toBe(false);
  });

  test("a refused OAuth grant fails the batch permanently, without a send", async () => {
    const revoked = makeServiceAccount();
    const before = peer.stats.sendRequests;
    const res = await transport.send({ appId: appSeq++, version: "x", fcm: { serviceAccount: revoked } }, items([makeFcmToken(), makeFcmToken()]));
    expect(res).toEqual([0, 1].map(() => ({ ok: false, retryable: false, reason: "oauth_refused", tokenInvalid: false })));
    expect(peer.stats.sendRequests).toBe(before);
  });

  test("bad input is classified, never thrown", async () => {
    const broken = { appId: appSeq++, version: "1", fcm: { serviceAccount: { ...sa, private_key: "nope" } } };
    expect(await transport.send(broken, items([makeFcmToken()]))).toEqual([{ ok: false, retryable: false, reason: "invalid_credentials", tokenInvalid: false }]);
    expect(await transport.send({ appId: appSeq++, version: "1" }, items([makeFcmToken()]))).toMatchObject([{ reason: "missing_credentials" }]);
    expect(await transport.send(creds, [{ recipient: { device_id: 1, token: makeFcmToken() }, content: null as any }])).toMatchObject([{ reason: "invalid_content" }]);
    expect(await transport.send(null as any, items([makeFcmToken()]))).toMatchObject([{ reason: "missing_credentials" }]);
    expect(await transport.send(creds, undefined as any)).toEqual([]);
  });

  test("close() deletes every Firebase app it created", async () => {
    const t = createFcmTransport({ connectTo: peer.connectTo, ca: peer.ca, oauthTokenUrl: peer.oauthTokenUrl });
    await t.send({ appId: 1, version: "a", fcm: { serviceAccount: sa } }, items([makeFcmToken()]));
    const names = t.appNames();
    expect(names.length).toBe(1);
    expect(getApps().some((a) => a.name === names[0])).toBe(true);
    await t.close();
    expect(getApps().some((a) => a.name === names[0])).toBe(false);
  });
});

describe("FCM payload size", () => {
  test("a payload over FCM's 4 KB is refused locally, permanently", async () => {
    const t = makeFcmToken();
    const before = peer.stats.sendRequests;
    const res = await transport.send(creds, items([t], { body: "é".repeat(2100) }));
    expect(res).toEqual([{ ok: false, retryable: false, reason: "payload_too_large", tokenInvalid: false }]);
    expect(peer.stats.sendRequests).toBe(before);
    expect(await transport.send(creds, items([t], { body: "x".repeat(1900) }))).toEqual([{ ok: true }]);
  });
});
