import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes, randomUUID } from "node:crypto";
import { createBus, type Bus, type BusMessage } from "@pushstack/bus";
import { seal, silentLogger } from "@pushstack/config";
import { SendSubjects, type AppCredentialsEntry, type SendJob, type SendResults } from "@pushstack/schema";
import { makeVapidKeys, startWebPushPeer, type WebPushPeer } from "@pushstack/testing";
import { createTransports } from "./transports";
import { createDispatcher } from "./dispatcher";

/** The job consumer end to end: bus → render → web-push → the peer decrypts → results on the bus. */
let bus: Bus;
let peer: WebPushPeer;
let dispatcher: ReturnType<typeof createDispatcher>;
let transports: ReturnType<typeof createTransports>;
const masterKey = randomBytes(32);
const vapid = makeVapidKeys();
const results: SendResults[] = [];

beforeAll(async () => {
  bus = await createBus({ natsUrl: process.env.NATS_URL || null, prefix: "d" + randomBytes(5).toString("hex") });
  peer = await startWebPushPeer();
  transports = createTransports({ webpush: { allowedHosts: [peer.host], ca: peer.ca } });
  dispatcher = createDispatcher({ bus, log: silentLogger, masterKey, transports, retryPolicy: { maxAttempts: 3, baseDelayMs: 20, maxDelayMs: 50, maxRetryAfterMs: 1000 } });
  await dispatcher.start();
  const entry: AppCredentialsEntry = { app_id: 7, version: 3, fcm: null, apns: null, webpush: { public_key: vapid.publicKey, private_key: vapid.privateKey, subject: "mailto:o@example.com" } };
  await (await bus.kv(SendSubjects.credentialsBucket)).put("7", seal(masterKey, JSON.stringify(entry)));
  await bus.consume({ stream: SendSubjects.resultsStream, durable: "test", filterSubject: SendSubjects.results }, (m: BusMessage) => {
    results.push(m.json<SendResults>());
    m.ack();
  });
});
afterAll(async () => {
  await dispatcher.stop();
  await transports.close();
  await peer.close();
  await bus.close();
});

const recipient = (device_id: number, token: string, extra: Partial<SendJob["recipients"][number]> = {}) => ({
  device_id,
  msg_id: randomUUID(),
  token,
  external_id: `user-${device_id}`,
  language: "en",
  country: "BR",
  platform: "web",
  platform_name: "Chrome",
  tz_sec: 0,
  tags: { segment: "vip" },
  ...extra,
});

function job(recipients: SendJob["recipients"], over: Partial<SendJob> = {}): SendJob {
  return {
    job_id: randomUUID(),
    send_id: randomUUID(),
    transport: "webpush",
    app: { id: 7, name: "Lucky", app_link: "https://lucky.example" },
    credentials_version: 3,
    push: { source: "test", source_id: 1, title: "Hi {{external_id}} {Upper:vip}", body: "{{tag:segment}} on {{app_name}} {Push={A|B}}", icon_url: "https://cdn.example/i.png", image_url: null, click_url: null },
    render: { now: new Date().toISOString(), rotation: 1 },
    expires_at: null,
    recipients,
    ...over,
  };
}

async function resultsOf(jobId: string) {
  for (let i = 0; i < 200; i++) {
    const r = results.find((x) => x.job_id === jobId);
    if (r) return r;
    await Bun.sleep(25);
  }
  throw new Error("no results");
}

test("renders per recipient, delivers, reports sent and token_invalid per recipient", async () => {
  const good = peer.subscribe({ applicationServerKey: vapid.publicKey });
  const gone = peer.subscribe({ applicationServerKey: vapid.publicKey });
  peer.unsubscribe(gone.subscription.endpoint);
  const j = job([recipient(1, JSON.stringify(good.subscription)), recipient(2, JSON.stringify(gone.subscription)), recipient(3, "not a subscription")]);
  await bus.publish(SendSubjects.job("webpush"), JSON.stringify(j), { msgId: j.job_id });
  const r = await resultsOf(j.job_id);
  expect(r.results.map((x) => x.status)).toEqual(["sent", "token_invalid", "token_invalid"]);
  const got = peer.received.filter((x) => x.endpoint === good.subscription.endpoint);
  expect(got.length).toBe(1);
  expect(JSON.parse(got[0]!.payload)).toEqual({ msg_id: j.recipients[0]!.msg_id, title: "Hi user-1 VIP", body: "vip on Lucky B", icon_url: "https://cdn.example/i.png" });
});

test("an expired job is reported expired and not sent; a malformed job is dropped", async () => {
  const s = peer.subscribe({ applicationServerKey: vapid.publicKey });
  const j = job([recipient(4, JSON.stringify(s.subscription))], { expires_at: new Date(Date.now() - 1000).toISOString() });
  await bus.publish(SendSubjects.job("webpush"), "{\"nope\":1}");
  await bus.publish(SendSubjects.job("webpush"), JSON.stringify(j), { msgId: j.job_id });
  expect((await resultsOf(j.job_id)).results[0]!.status).toBe("expired");
  expect(peer.received.filter((x) => x.endpoint === s.subscription.endpoint).length).toBe(0);
});

test("a job for credentials newer than the bus has waits until core publishes them", async () => {
  const s = peer.subscribe({ applicationServerKey: vapid.publicKey });
  const j = job([recipient(5, JSON.stringify(s.subscription))], { credentials_version: 4 });
  await bus.publish(SendSubjects.job("webpush"), JSON.stringify(j), { msgId: j.job_id });
  await Bun.sleep(300);
  expect(results.find((x) => x.job_id === j.job_id)).toBeUndefined();
  const entry: AppCredentialsEntry = { app_id: 7, version: 4, fcm: null, apns: null, webpush: { public_key: vapid.publicKey, private_key: vapid.privateKey, subject: "mailto:o@example.com" } };
  await (await bus.kv(SendSubjects.credentialsBucket)).put("7", seal(masterKey, JSON.stringify(entry)));
  expect((await resultsOf(j.job_id)).results[0]!.status).toBe("sent");
});
