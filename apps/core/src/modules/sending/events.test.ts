import { afterAll, beforeAll, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { devices, triggerQueue } from "@pushstack/schema";
import { startTestStack, type TestStack } from "../ingest/testing";
import { addEvent, fannedOut, makePack, receivedBy, startPeerAndDispatcher, waitFor, webDevice } from "./testkit";

let s: TestStack;
let net: Awaited<ReturnType<typeof startPeerAndDispatcher>>;
let admin: string;
beforeAll(async () => {
  s = await startTestStack();
  net = await startPeerAndDispatcher(s.t);
  admin = (await s.t.user({ admin: true })).token;
});
afterAll(async () => {
  await net.close();
  await s.close();
});

const V3 = (appId: number) => `/api/v3/apps/${appId}/instances`;
const job = (name: string, at?: Date) => s.t.req("POST", `/api/v3/admin/jobs/${name}`, { token: admin, body: at ? { at: at.toISOString() } : {} });
const postback = (appId: number, qs: string) => s.call("GET", `/postback?app_id=${appId}&${qs}`);

test("SDK web device + postback reg: the peer decrypts one rendered push; delivered and clicked move the analytics", async () => {
  const { app, token, userId } = await s.app({ platform: "web", plan: "pro" });
  const { langs } = await makePack(s.t, { userId, appId: app.id, languages: ["en"], fallback: "en" });
  await addEvent(s.t, langs.en!, "reg", 0, { title: "Hi {{external_id}} {Upper:big}", body: "{{tag:segment}} deal {Push={A|B}}" });
  // the SDK path through the edge: register, then info with a subscription pointing at the peer
  const reg = await s.call("POST", V3(app.id), { ic_token: `ic-${crypto.randomUUID()}`, ext_id: "user-42" });
  expect(reg.status).toBe(200);
  const ic = reg.body.id as string;
  const sub = net.peer.subscribe({ applicationServerKey: app.vapid_public_key });
  const info = await s.call("PUT", `${V3(app.id)}/${ic}/info`, { platform_type: "web", transport_type: "webpush", transport_token: sub.subscription, lang: "en", tags: { segment: "vip" } });
  expect(info.status).toBe(200);
  await s.settle();

  expect((await postback(app.id, "external_id=user-42&event=reg")).status).toBe(200);
  await s.settle();
  expect((await job("send-due")).status).toBe(200); // (the every-5-s schedule may have claimed it first)
  const [row] = await s.t.ctx.db.select().from(triggerQueue).where(and(eq(triggerQueue.appId, app.id), eq(triggerQueue.kind, "pack_event")));
  expect(row!.status).toBe("sent");
  await fannedOut(s.t);
  await waitFor(() => receivedBy(net.peer, sub.subscription.endpoint).length === 1);
  await job("send-due"); // nothing left
  await Bun.sleep(300);
  const got = receivedBy(net.peer, sub.subscription.endpoint);
  expect(got.length).toBe(1);
  expect([got[0].title, got[0].body]).toEqual(["Hi user-42 BIG", "vip deal A"]);

  const analytics = async () => (await s.t.req("GET", `/api/v3/apps/${app.id}/analytics?group_by=push`, { token })).body;
  await waitFor(async () => (await analytics()).totals.sent === 1);
  for (const event of ["delivered", "clicked", "clicked"]) {
    expect((await s.call("POST", `${V3(app.id)}/${ic}/events/notification`, { msg_id: got[0].msg_id, event })).status).toBe(200);
  }
  await s.settle();
  await job("sending-rollup");
  await job("sending-rollup");
  const a = await analytics();
  expect(a.totals).toEqual({ sent: 1, failed: 0, delivered: 1, clicked: 1, ctr: 1 });
  expect(a.rows.length).toBe(1);
  expect(a.rows[0].source).toBe("pack_event");
  const today = new Date().toISOString().slice(0, 10);
  const byDay = (await s.t.req("GET", `/api/v3/apps/${app.id}/analytics?date_from=${today}&date_to=${today}`, { token })).body;
  expect(byDay.rows).toEqual([{ day: today, sent: 1, failed: 0, delivered: 1, clicked: 1, ctr: 1 }]);
  const before = (await s.t.req("GET", `/api/v3/apps/${app.id}/analytics?date_to=2000-01-01`, { token })).body;
  expect(before.totals.sent).toBe(0);
  expect((await s.t.req("GET", `/api/v3/apps/${app.id}/analytics?date_from=2025-13-01`, { token })).status).toBe(400);
});

test("delay_minutes waits for the (injected) clock; dep3 fires on the third deposit only; language fallback", async () => {
  const { app, userId } = await s.app({ platform: "web", plan: "pro" });
  const { langs } = await makePack(s.t, { userId, appId: app.id, languages: ["en", "es"], fallback: "es" });
  await addEvent(s.t, langs.es!, "dep3", 30, { title: "third {{external_id}}" });
  await addEvent(s.t, langs.en!, "dep3", 30, { title: "wrong language" });
  const d = await webDevice(s.t, net.peer, app, { ext: "dd", language: "fr" }); // no fr: fallback es
  for (let i = 0; i < 2; i++) await postback(app.id, "external_id=dd&event=dep");
  await s.settle();
  const pending = () => s.t.ctx.db.select().from(triggerQueue).where(and(eq(triggerQueue.deviceId, d.id), eq(triggerQueue.kind, "pack_event")));
  expect(await pending()).toEqual([]);
  await postback(app.id, "external_id=dd&event=dep");
  await s.settle();
  const rows = await pending();
  expect(rows.map((r) => [r.eventCode, r.status])).toEqual([["dep3", "pending"]]);
  expect((await job("send-due")).body.sends).toBe(0); // not due yet
  s.t.setNow(new Date(rows[0]!.dueAt.getTime() + 60_000));
  try {
    await job("send-due");
    expect((await pending())[0]!.status).toBe("sent");
  } finally {
    s.t.setNow(null);
  }
  await fannedOut(s.t);
  await waitFor(() => receivedBy(net.peer, d.endpoint).length === 1);
  expect(receivedBy(net.peer, d.endpoint)[0].title).toBe("third dd");
  expect((await pending())[0]!.status).toBe("sent");
});

test("a token the push service rejects is marked invalid and not sent to again", async () => {
  const { app, userId } = await s.app({ platform: "web", plan: "pro" });
  const { langs } = await makePack(s.t, { userId, appId: app.id, languages: ["en"], fallback: "en" });
  await addEvent(s.t, langs.en!, "reg", 0, { title: "x" });
  const d = await webDevice(s.t, net.peer, app, { ext: "gone", language: "en" });
  net.peer.unsubscribe(d.endpoint);
  await postback(app.id, "external_id=gone&event=reg");
  await s.settle();
  await job("send-due");
  await waitFor(async () => (await s.t.ctx.db.select().from(devices).where(eq(devices.id, d.id)))[0]!.tokenInvalid);
});
