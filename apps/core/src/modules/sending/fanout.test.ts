import { afterAll, beforeAll, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { apps, devices, notificationEvents, pushPacks, schedulers, sends, sendStatsDaily, SendSubjects, users } from "@pushstack/schema";
import { startTestCore, type TestCore } from "../../testing/harness";
import { createSend } from "./create";
import { fanOutPage } from "./fanout";
import { rollup } from "./results";
import type { Audience } from "./fanout";
import { addScheduled, makePack, makeTemplate } from "./testkit";

let t: TestCore;
beforeAll(async () => {
  t = await startTestCore();
  // no jobs, no pump, no results consumer: this file drives fanOutPage and rollup itself, page by page
  await t.core.stop();
});
afterAll(() => t.close());

async function account(plan = "pro") {
  const u = await t.user({ plan });
  const r = await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "A", platform: "web" } });
  return { userId: u.id, appId: r.body.id as number };
}

/** n web devices with (fake) subscriptions: nothing delivers them here, the jobs only sit in the stream. */
async function addDevices(appId: number, n: number) {
  const rows = Array.from({ length: n }, (_, i) => ({
    appId,
    installToken: `dev-${appId}-${i}`,
    platform: "web",
    language: "en",
    transportType: "webpush",
    transportToken: JSON.stringify({ endpoint: `https://push.example/${appId}/${i}`, keys: { p256dh: "k", auth: "a" } }),
    source: "server",
  }));
  const out = await t.ctx.db.insert(devices).values(rows).returning({ id: devices.id });
  return out.map((d) => d.id);
}

const send = (key: string, appId: number, source: string, sourceId: number, packId: number | null, audience: Audience, templateId: number | null = null) =>
  t.ctx.db.transaction((tx) => createSend(tx, { key, appId, source, sourceId, packId, templateId, audience, renderAt: new Date() })).then((id) => id!);
const row = async (id: number) => (await t.ctx.db.select().from(sends).where(eq(sends.id, id)))[0]!;
const queued = async () => (await (t.bus as unknown as { streamInfo(n: string): Promise<{ messages: number }> }).streamInfo(SendSubjects.stream)).messages;

async function schedulerOf(userId: number, appId: number) {
  const push = await makeTemplate(t, { userId, appId, defaultLanguage: "en", translations: { en: { title: "x" } } });
  const [sc] = await t.ctx.db.insert(schedulers).values({ userId, appId, pushId: push, name: "s", kind: "weekly", daysOfWeek: [0], sendTime: "10:00" }).returning();
  return { id: sc!.id, push };
}

test("a send stops at the next page once its app is archived (cancelled); an untouched one runs to done", async () => {
  const live = await account();
  const paused = await account();
  // one turn is 4 pages of 500: 2,001 devices take two turns
  const ids = await addDevices(paused.appId, 2001);
  await addDevices(live.appId, 2001);
  const scLive = await schedulerOf(live.userId, live.appId);
  const scPaused = await schedulerOf(paused.userId, paused.appId);
  const a = await send("t:live", live.appId, "scheduler", scLive.id, null, { scheduler_id: scLive.id, template_id: scLive.push, filters: {} }, scLive.push);
  const b = await send("t:archived", paused.appId, "scheduler", scPaused.id, null, { scheduler_id: scPaused.id, template_id: scPaused.push, filters: {} }, scPaused.push);
  const before = await queued();
  expect(await fanOutPage(t.ctx, a)).toBe(true);
  expect(await fanOutPage(t.ctx, b)).toBe(true); // first turn: 2,000 devices in 4 jobs
  await t.ctx.db.update(apps).set({ archived: true }).where(eq(apps.id, paused.appId));
  expect(await fanOutPage(t.ctx, b)).toBe(false);
  expect(await fanOutPage(t.ctx, a)).toBe(false); // last page (1 device)
  const [ra, rb] = [await row(a), await row(b)];
  expect([ra.status, ra.recipients, ra.jobs]).toEqual(["done", 2001, 5]);
  expect([rb.status, rb.recipients, rb.jobs, rb.cursor]).toEqual(["cancelled", 2000, 4, ids[1999]]);
  expect(await queued()).toBe(before + 9); // a: five pages, b: four
  expect(await fanOutPage(t.ctx, b)).toBe(false); // cancelled stays cancelled
});

test("past_due account, unpublished system pack, paused or deleted scheduler: the send is cancelled before its next page", async () => {
  const due = await account();
  await addDevices(due.appId, 3);
  const dueP = await makePack(t, { userId: due.userId, appId: due.appId, languages: ["en"], fallback: "en" });
  const duePush = await addScheduled(t, dueP.langs.en!, 0, "10:00", { title: "x" });
  const s1 = await send("t:past-due", due.appId, "pack_scheduled", duePush, dueP.packId, { pack_id: dueP.packId, language_id: dueP.langs.en!, audience_tag: null });
  await t.ctx.db.update(users).set({ subscriptionStatus: "past_due" }).where(eq(users.id, due.userId));

  const sys = await account();
  await addDevices(sys.appId, 3);
  const sysP = await makePack(t, { userId: null, appId: sys.appId, languages: ["en"], fallback: "en", system: true, published: true });
  const sysPush = await addScheduled(t, sysP.langs.en!, 0, "10:00", { title: "x" });
  const s2 = await send("t:unpublished", sys.appId, "pack_scheduled", sysPush, sysP.packId, { pack_id: sysP.packId, language_id: sysP.langs.en!, audience_tag: null });
  await t.ctx.db.update(pushPacks).set({ isPublished: false }).where(eq(pushPacks.id, sysP.packId));

  const sch = await account();
  await addDevices(sch.appId, 3);
  const sc = await schedulerOf(sch.userId, sch.appId);
  const s3 = await send("t:paused", sch.appId, "scheduler", sc.id, null, { scheduler_id: sc.id, template_id: sc.push, filters: {} }, sc.push);
  await t.ctx.db.update(schedulers).set({ status: "paused" }).where(eq(schedulers.id, sc.id));
  const sc2 = await schedulerOf(sch.userId, sch.appId);
  const s4 = await send("t:deleted", sch.appId, "scheduler", sc2.id, null, { scheduler_id: sc2.id, template_id: sc2.push, filters: {} }, sc2.push);
  await t.ctx.db.delete(schedulers).where(eq(schedulers.id, sc2.id));

  for (const id of [s1, s2, s3, s4]) {
    expect(await fanOutPage(t.ctx, id)).toBe(false);
    const r = await row(id);
    expect([r.sendKey, r.status, r.recipients]).toEqual([r.sendKey, "cancelled", 0]);
  }
  // control: the same pack send for an account in good standing goes out
  await t.ctx.db.update(users).set({ subscriptionStatus: "active" }).where(eq(users.id, due.userId));
  const s5 = await send("t:resumed", due.appId, "pack_scheduled", duePush, dueP.packId, { pack_id: dueP.packId, language_id: dueP.langs.en!, audience_tag: null });
  expect(await fanOutPage(t.ctx, s5)).toBe(false);
  expect([(await row(s5)).status, (await row(s5)).recipients]).toEqual(["done", 3]);
});

test("rollup counts each SDK report once, including one that commits with a lower id after a higher one was folded; template_id reaches the stats", async () => {
  const { userId, appId } = await account();
  const [d1, d2, d3] = await addDevices(appId, 3);
  const sc = await schedulerOf(userId, appId);
  const sendId = await send("t:rollup", appId, "scheduler", sc.id, null, { scheduler_id: sc.id, template_id: sc.push, filters: {} }, sc.push);
  const report = (id: number, deviceId: number, event: string) =>
    t.ctx.db.insert(notificationEvents).values({ id, deviceId, appId, msgId: `${sendId}.${deviceId}`, event, at: new Date() });
  const stats = async () => {
    const [r] = await t.ctx.db.select().from(sendStatsDaily).where(and(eq(sendStatsDaily.appId, appId), eq(sendStatsDaily.source, "scheduler")));
    return r && { delivered: r.delivered, clicked: r.clicked, template: r.templateId, scheduler: r.sourceId };
  };
  await report(900_000_002, d1!, "delivered");
  await report(900_000_003, d1!, "clicked");
  expect((await rollup(t.ctx, new Date())).events).toBe(2);
  expect(await stats()).toEqual({ delivered: 1, clicked: 1, template: sc.push, scheduler: sc.id });
  // rows that commit late with lower ids (ids are taken before commit): an id watermark would skip them
  await report(900_000_001, d2!, "delivered");
  await report(5, d3!, "delivered");
  expect((await rollup(t.ctx, new Date())).events).toBe(2);
  expect((await rollup(t.ctx, new Date())).events).toBe(0);
  expect(await stats()).toEqual({ delivered: 3, clicked: 1, template: sc.push, scheduler: sc.id });
  const uncounted = await t.ctx.db.select().from(notificationEvents).where(eq(notificationEvents.counted, false));
  expect(uncounted).toEqual([]);
});
