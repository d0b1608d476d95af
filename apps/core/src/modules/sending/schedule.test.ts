import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { apps, pushPacks, sends, users } from "@pushstack/schema";
import { startTestCore, type TestCore } from "../../testing/harness";
import { createCore } from "../../app";
import { runJob } from "../jobs";
import { addScheduled, fannedOut, makePack, receivedBy, startPeerAndDispatcher, waitFor, webDevice } from "./testkit";

let t: TestCore;
let net: Awaited<ReturnType<typeof startPeerAndDispatcher>>;
let admin: string;
beforeAll(async () => {
  t = await startTestCore();
  net = await startPeerAndDispatcher(t);
  admin = (await t.user({ admin: true })).token;
});
afterAll(async () => {
  await net.close();
  await t.close();
});

async function webApp() {
  const u = await t.user({ plan: "team" });
  const r = await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "Lucky", platform: "web" } });
  expect(r.status).toBe(201);
  return { user: u, app: r.body as { id: number; vapid_public_key: string } };
}
const tick = (at: string) => t.req("POST", "/api/v3/admin/jobs/schedule-tick", { token: admin, body: { at } });
const sendsOf = (appId: number) => t.ctx.db.select().from(sends).where(eq(sends.appId, appId));

test("a weekly slot sends once per device: pack language, fallback, audience_tag, rendered macros; rotation moves per send", async () => {
  const { user, app } = await webApp();
  const { langs } = await makePack(t, { userId: user.id, appId: app.id, languages: ["en", "pt"], fallback: "en" });
  // Monday (0) 10:00 UTC; audience_tag `vip` = tag segment=vip
  await addScheduled(t, langs.en!, 0, "10:00", { title: "EN {{external_id}}", body: "{{tag:segment}} {Push={A|B}}", audienceTag: "vip" });
  await addScheduled(t, langs.pt!, 0, "10:00", { title: "PT {{external_id}}", body: "{Push={A|B}}", audienceTag: "vip" });
  const en = await webDevice(t, net.peer, app, { ext: "en1", language: "en-US", tags: { segment: "vip" } });
  const pt = await webDevice(t, net.peer, app, { ext: "pt1", language: "pt-BR", tags: { segment: "vip" } });
  const de = await webDevice(t, net.peer, app, { ext: "de1", language: "de", tags: { segment: "vip" } }); // no de: fallback en
  const other = await webDevice(t, net.peer, app, { ext: "en2", language: "en", tags: { segment: "other" } });

  const r = await tick("2025-03-03T10:00:30Z");
  expect(r.status).toBe(200);
  expect(r.body.sends).toBe(2);
  expect((await tick("2025-03-03T10:00:59Z")).body.sends).toBe(0); // same minute again: nothing new
  await fannedOut(t);
  await waitFor(() => [en, pt, de].every((d) => receivedBy(net.peer, d.endpoint).length === 1));
  await Bun.sleep(300);
  expect(receivedBy(net.peer, en.endpoint).map((p) => [p.title, p.body])).toEqual([["EN en1", "vip A"]]);
  expect(receivedBy(net.peer, de.endpoint).map((p) => p.title)).toEqual(["EN de1"]);
  expect(receivedBy(net.peer, pt.endpoint).map((p) => [p.title, p.body])).toEqual([["PT pt1", "A"]]);
  expect(receivedBy(net.peer, other.endpoint)).toEqual([]);
  const [first] = await sendsOf(app.id);
  expect(receivedBy(net.peer, en.endpoint)[0].msg_id).toMatch(new RegExp(`^\\d+\\.${en.id}$`));
  expect(first!.status).toBe("done");

  // next week: rotation advanced once per send (not per recipient)
  await tick("2025-03-10T10:00:00Z");
  await fannedOut(t);
  await waitFor(() => receivedBy(net.peer, pt.endpoint).length === 2);
  expect(receivedBy(net.peer, pt.endpoint)[1].body).toBe("B");
  expect(receivedBy(net.peer, en.endpoint)[1].body).toBe("vip B");
});

test("missed minutes are caught up within the window, older ones skipped", async () => {
  const { user, app } = await webApp();
  const { langs } = await makePack(t, { userId: user.id, appId: app.id, languages: ["en"], fallback: "en" });
  await addScheduled(t, langs.en!, 1, "08:00", { title: "old" }); // Tuesday 08:00
  await addScheduled(t, langs.en!, 1, "08:25", { title: "recent" });
  // the watermark only moves forward (real-time ticks run too): use instants past any real clock
  await tick("2031-03-04T07:59:00Z");
  const r = await tick("2031-03-04T08:30:00Z"); // 08:00 is 30 minutes late: skipped; 08:25 caught up
  expect(r.body.skipped_minutes).toBeGreaterThan(0);
  expect((await sendsOf(app.id)).map((s) => s.sendKey)).toEqual([expect.stringMatching(/:2031-03-04T08:25$/)]);
  expect(r.body.sends).toBe(1);
});

test("pausing: past_due account, archived app, unpublished system pack send nothing", async () => {
  const a = await webApp();
  const b = await webApp();
  const c = await webApp();
  const pa = await makePack(t, { userId: a.user.id, appId: a.app.id, languages: ["en"], fallback: "en" });
  const pb = await makePack(t, { userId: b.user.id, appId: b.app.id, languages: ["en"], fallback: "en" });
  const pc = await makePack(t, { userId: null, appId: c.app.id, languages: ["en"], fallback: "en", system: true, published: true });
  for (const p of [pa, pb, pc]) await addScheduled(t, p.langs.en!, 2, "12:00", { title: "x" }); // Wednesday
  await t.ctx.db.update(users).set({ subscriptionStatus: "past_due" }).where(eq(users.id, a.user.id));
  await t.ctx.db.update(apps).set({ archived: true }).where(eq(apps.id, b.app.id));
  await t.ctx.db.update(pushPacks).set({ isPublished: false }).where(eq(pushPacks.id, pc.packId));
  await tick("2025-03-05T12:00:00Z");
  for (const x of [a, b, c]) expect(await sendsOf(x.app.id)).toEqual([]);
  // published again: it sends
  await t.ctx.db.update(pushPacks).set({ isPublished: true }).where(eq(pushPacks.id, pc.packId));
  await tick("2025-03-05T12:00:00Z"); // nothing was sent for that minute: now it is
  expect((await sendsOf(c.app.id)).length).toBe(1);
});

test("two cores ticking the same minute send each recipient once", async () => {
  const { user, app } = await webApp();
  const { langs } = await makePack(t, { userId: user.id, appId: app.id, languages: ["en"], fallback: "en" });
  await addScheduled(t, langs.en!, 3, "09:15", { title: "twice?" }); // Thursday
  const ds: { id: number; endpoint: string }[] = [];
  for (let i = 0; i < 5; i++) ds.push(await webDevice(t, net.peer, app, { ext: `tw${i}`, language: "en" }));
  const other = createCore({ ...t.ctx });
  await other.start();
  try {
    const at = new Date("2025-03-06T09:15:00Z");
    const [x, y] = await Promise.all([runJob(t.ctx, t.core.jobs, "schedule-tick", at), runJob(t.ctx, other.jobs, "schedule-tick", at)]);
    expect((x!.sends as number) + (y!.sends as number)).toBe(1);
    await Promise.all([runJob(t.ctx, t.core.jobs, "send-due", at), runJob(t.ctx, other.jobs, "send-due", at)]);
    await fannedOut(t);
    await waitFor(() => ds.every((d) => receivedBy(net.peer, d.endpoint).length >= 1));
    await Bun.sleep(500);
    for (const d of ds) expect(receivedBy(net.peer, d.endpoint).length).toBe(1);
  } finally {
    await other.stop();
  }
});
