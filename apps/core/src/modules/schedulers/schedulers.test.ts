import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { apps, devices, sends, triggerQueue, users } from "@pushstack/schema";
import { startTestStack, type TestStack } from "../ingest/testing";
import type { TestCore } from "../../testing/harness";
import { fannedOut, makeTemplate, receivedBy, startPeerAndDispatcher, waitFor, webDevice } from "../sending/testkit";
import { nextWeekly } from "./service";

let s: TestStack;
let t: TestCore;
let net: Awaited<ReturnType<typeof startPeerAndDispatcher>>;
let admin: string;
beforeAll(async () => {
  s = await startTestStack();
  t = s.t;
  net = await startPeerAndDispatcher(t);
  admin = (await t.user({ admin: true })).token;
});
afterAll(async () => {
  await net.close();
  await s.close();
});

const S = "/api/v3/schedulers";
const create = (token: string, body: unknown) => t.req("POST", S, { token, body });
const job = (name: string, at?: string) => t.req("POST", `/api/v3/admin/jobs/${name}`, { token: admin, body: at ? { at } : {} });
const postback = (appId: number, qs: string) => s.call("GET", `/postback?app_id=${appId}&${qs}`);
const sendsOf = (schedulerId: number) =>
  t.ctx.db
    .select()
    .from(sends)
    .where(and(eq(sends.source, "scheduler"), eq(sends.sourceId, schedulerId)));
const rowsOf = (schedulerId: number) => t.ctx.db.select().from(triggerQueue).where(eq(triggerQueue.schedulerId, schedulerId));

/** An account (plan) with one web app and a push template in English (default). */
async function setup(plan = "pro", translations: Record<string, { title: string; body?: string; click_url?: string }> = { en: { title: "Hi {{external_id}}" } }, defaultLanguage = "en") {
  const { app, token, userId } = await s.app({ platform: "web", plan });
  const push = await makeTemplate(t, { userId, appId: app.id, defaultLanguage, translations });
  return { app, token, userId, push };
}

describe("sending", () => {
  test("instant: the filtered audience gets its language's translation (default as fallback) and click URL, decrypted by the Web Push peer; analytics by template and scheduler", async () => {
    const { app, token, userId, push } = await setup(
      "pro",
      {
        en: { title: "Hi {{external_id}}", body: "EN {Push={A|B}}", click_url: "https://t.example/c?sub={{external_id}}&seg={{tag:segment}}&n={{tag:note}}" },
        pt: { title: "Olá {{external_id}}", body: "PT", click_url: "https://t.example/pt" },
        es: { title: "Hola {{external_id}}", click_url: "{{app_link}}?s={{external_id}}" }, // the app has no link: no click URL
      },
      "es",
    );
    const base = { tags: { segment: "vip" }, country: "US", events: ["reg"] };
    const en = await webDevice(t, net.peer, app, { ext: "e1", language: "en-US", ...base, tags: { ...base.tags, note: "a b&c" } });
    const pt = await webDevice(t, net.peer, app, { ext: "p1", language: "pt-BR", ...base, events: ["reg", "dep"] });
    const fr = await webDevice(t, net.peer, app, { ext: "f1", language: "fr", ...base }); // no fr: the default, es
    const excluded = [
      await webDevice(t, net.peer, app, { ext: "x-country", language: "en", ...base, country: "DE" }),
      await webDevice(t, net.peer, app, { ext: "x-tags", language: "en", ...base, tags: { segment: "other" } }),
      await webDevice(t, net.peer, app, { ext: "x-events", language: "en", ...base, events: ["install"] }),
    ];
    const r = await create(token, { app_id: app.id, push_id: push, name: "Promo", type: "instant", filters: { country: "us", tags: { segment: "vip" }, events: ["reg"] } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ type: "instant", status: "completed", push_id: push, next_run_at: null, filters: { country: "US", tags: { segment: "vip" }, events: ["reg"] } });
    expect(r.body.last_sent_at).toBeString();
    await fannedOut(t);
    await waitFor(() => [en, pt, fr].every((d) => receivedBy(net.peer, d.endpoint).length === 1));
    await Bun.sleep(300);
    expect(receivedBy(net.peer, en.endpoint).map((p) => [p.title, p.body])).toEqual([["Hi e1", "EN A"]]);
    expect(receivedBy(net.peer, pt.endpoint).map((p) => [p.title, p.body])).toEqual([["Olá p1", "PT"]]);
    expect(receivedBy(net.peer, fr.endpoint).map((p) => p.title)).toEqual(["Hola f1"]);
    // macros rendered per recipient, then re-encoded as a URL (a tag value is written as it is)
    expect(receivedBy(net.peer, en.endpoint).map((p) => p.click_url)).toEqual(["https://t.example/c?sub=e1&seg=vip&n=a%20b&c"]);
    expect(receivedBy(net.peer, pt.endpoint).map((p) => p.click_url)).toEqual(["https://t.example/pt"]);
    expect(receivedBy(net.peer, fr.endpoint).map((p) => p.click_url)).toEqual([undefined]);
    for (const d of excluded) expect(receivedBy(net.peer, d.endpoint)).toEqual([]);
    const [send] = await sendsOf(r.body.id);
    // one job per translation (webpush.en, webpush.pt, webpush.es); three recipients
    expect([send!.status, send!.jobs, send!.recipients, send!.templateId, send!.sendKey]).toEqual(["done", 3, 3, push, `sched-i:${r.body.id}`]);

    const analytics = async (qs: string) => (await t.req("GET", `/api/v3/apps/${app.id}/analytics?${qs}`, { token })).body;
    await waitFor(async () => (await analytics("group_by=template")).totals.sent === 3);
    expect((await analytics("group_by=template")).rows).toEqual([{ source: "scheduler", template_id: push, sent: 3, failed: 0, delivered: 0, clicked: 0, ctr: 0 }]);
    expect((await analytics("group_by=scheduler")).rows).toEqual([{ source: "scheduler", scheduler_id: r.body.id, sent: 3, failed: 0, delivered: 0, clicked: 0, ctr: 0 }]);
    expect((await analytics(`scheduler_id=${r.body.id}`)).totals.sent).toBe(3);
    expect((await analytics(`template_id=${push + 1000}`)).totals.sent).toBe(0);
    expect((await analytics(`push_id=${r.body.id}`)).totals.sent).toBe(0); // push_id names pack pushes only
    expect((await analytics("source=scheduler")).totals.sent).toBe(3);
    expect((await analytics("source=pack_event")).totals.sent).toBe(0);
    expect((await t.req("GET", `/api/v3/apps/${app.id}/analytics?source=nope`, { token })).status).toBe(400);
    // basic analytics (Free) has no scheduler / template grouping
    await t.ctx.db.update(users).set({ plan: "free" }).where(eq(users.id, userId));
    const free = await t.req("GET", `/api/v3/apps/${app.id}/analytics?group_by=scheduler`, { token });
    expect(free.status).toBe(403);
    expect(free.body.error).toContain("Pro");
  });

  test("weekly via schedule-tick: the same minute twice sends once; language filter; rotation per send; a paused scheduler sends nothing", async () => {
    const { app, token, push } = await setup("pro", { en: { title: "W {{external_id}}", body: "{Push={A|B}}" } });
    const gb = await webDevice(t, net.peer, app, { ext: "gb", language: "en-GB" });
    const pt = await webDevice(t, net.peer, app, { ext: "pt", language: "pt" });
    const r = await create(token, { app_id: app.id, push_id: push, name: "Mondays", type: "weekly", days_of_week: [0], send_time: "10:00", filters: { language: "en" } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ status: "active", days_of_week: [0], send_time: "10:00", send_at: null, last_sent_at: null });
    const next = new Date(r.body.next_run_at);
    expect([next.getUTCDay(), next.toISOString().slice(11, 16)]).toEqual([1, "10:00"]); // a Monday, 10:00 UTC

    // (instants before the tick watermark run their minute alone: an admin replay)
    expect((await job("schedule-tick", "2025-03-03T10:00:10Z")).body.sends).toBe(1);
    expect((await job("schedule-tick", "2025-03-03T10:00:50Z")).body.sends).toBe(0);
    expect((await job("schedule-tick", "2025-03-04T10:00:00Z")).body.sends).toBe(0); // Tuesday
    await fannedOut(t);
    await waitFor(() => receivedBy(net.peer, gb.endpoint).length === 1);
    expect((await sendsOf(r.body.id)).map((x) => x.sendKey)).toEqual([`sched-s:${r.body.id}:2025-03-03T10:00`]);
    await job("schedule-tick", "2025-03-10T10:00:00Z");
    await fannedOut(t);
    await waitFor(() => receivedBy(net.peer, gb.endpoint).length === 2);
    expect(receivedBy(net.peer, gb.endpoint).map((p) => [p.title, p.body])).toEqual([
      ["W gb", "A"],
      ["W gb", "B"],
    ]);
    expect(receivedBy(net.peer, pt.endpoint)).toEqual([]);
    expect((await t.req("GET", `${S}/${r.body.id}`, { token })).body.last_sent_at).toBe("2025-03-10T10:00:00.000Z");

    const paused = await t.req("PATCH", `${S}/${r.body.id}`, { token, body: { status: "paused" } });
    expect(paused.body).toMatchObject({ status: "paused", next_run_at: null });
    expect((await job("schedule-tick", "2025-03-17T10:00:00Z")).body.sends).toBe(0);
    expect(await sendsOf(r.body.id)).toHaveLength(2);
    const resumed = await t.req("PATCH", `${S}/${r.body.id}`, { token, body: { status: "active", days_of_week: [2, 1], send_time: "11:30" } });
    expect(resumed.body).toMatchObject({ status: "active", days_of_week: [1, 2], send_time: "11:30" });
    expect((await job("schedule-tick", "2025-03-18T11:30:00Z")).body.sends).toBe(1); // Tuesday, new time
  });

  test("once: sent by the tick that reaches send_at (in send_at's minute), then completed; a new send_at re-arms it", async () => {
    const { app, token, push } = await setup();
    const d = await webDevice(t, net.peer, app, { ext: "o1", language: "en" });
    t.setNow(new Date("2031-05-05T09:00:00Z"));
    try {
      const r = await create(token, { app_id: app.id, push_id: push, name: "Launch", type: "once", send_at: "2031-05-05T09:30:20Z" });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ status: "active", send_at: "2031-05-05T09:30:20.000Z", next_run_at: "2031-05-05T09:30:20.000Z" });
      expect((await job("schedule-tick", "2031-05-05T09:30:00Z")).body.sends).toBe(0); // not yet
      expect((await job("schedule-tick", "2031-05-05T09:31:00Z")).body.sends).toBe(1);
      expect((await job("schedule-tick", "2031-05-05T09:31:30Z")).body.sends).toBe(0);
      const done = (await t.req("GET", `${S}/${r.body.id}`, { token })).body;
      expect(done).toMatchObject({ status: "completed", last_sent_at: "2031-05-05T09:30:00.000Z", next_run_at: null });
      expect((await sendsOf(r.body.id)).map((x) => x.sendKey)).toEqual([`sched-s:${r.body.id}:2031-05-05T09:30`]);
      await fannedOut(t);
      await waitFor(() => receivedBy(net.peer, d.endpoint).length === 1);

      expect((await t.req("PATCH", `${S}/${r.body.id}`, { token, body: { status: "active" } })).status).toBe(409);
      const again = await t.req("PATCH", `${S}/${r.body.id}`, { token, body: { send_at: "2031-05-06T08:00:00Z" } });
      expect(again.body).toMatchObject({ status: "active", next_run_at: "2031-05-06T08:00:00.000Z" });
      expect((await job("schedule-tick", "2031-05-06T08:00:00Z")).body.sends).toBe(1);
      expect((await t.req("GET", `${S}/${r.body.id}`, { token })).body.status).toBe("completed");
      // a paused once scheduler whose time passed resumes only with a new send_at
      const p = await create(token, { app_id: app.id, push_id: push, name: "Later", type: "once", send_at: "2031-05-05T10:00:00Z" });
      await t.req("PATCH", `${S}/${p.body.id}`, { token, body: { status: "paused" } });
      expect((await job("schedule-tick", "2031-05-05T10:00:00Z")).body.sends).toBe(0);
      t.setNow(new Date("2031-05-05T10:05:00Z"));
      const late = await t.req("PATCH", `${S}/${p.body.id}`, { token, body: { status: "active" } });
      expect([late.status, late.body.error]).toEqual([400, "send_at is in the past: give a new send_at to resume"]);

      // no tick within 10 minutes of send_at (core was down): missed, not sent late; a new send_at re-arms it
      const m = await create(token, { app_id: app.id, push_id: push, name: "Missed", type: "once", send_at: "2031-05-05T11:00:00Z" });
      const late2 = await job("schedule-tick", "2031-05-05T11:10:30Z");
      expect([late2.body.sends, late2.body.missed_schedulers]).toEqual([0, 1]);
      expect((await t.req("GET", `${S}/${m.body.id}`, { token })).body).toMatchObject({ status: "missed", last_sent_at: null, next_run_at: null });
      expect(await sendsOf(m.body.id)).toEqual([]);
      expect((await t.req("GET", `${S}?app_id=${app.id}&status=missed`, { token })).body.items.map((x: { id: number }) => x.id)).toEqual([m.body.id]);
      t.setNow(new Date("2031-05-05T11:11:00Z"));
      expect((await t.req("PATCH", `${S}/${m.body.id}`, { token, body: { status: "active" } })).status).toBe(409);
      const rearmed = await t.req("PATCH", `${S}/${m.body.id}`, { token, body: { send_at: "2031-05-05T12:00:00Z" } });
      expect(rearmed.body).toMatchObject({ status: "active", next_run_at: "2031-05-05T12:00:00.000Z" });
      expect((await job("schedule-tick", "2031-05-05T12:00:00Z")).body.sends).toBe(1);
    } finally {
      t.setNow(null);
    }
  });

  test("event: a row per matching scheduler due after delay_minutes (injected clock); dep3 on the third deposit only; filters checked again at send time", async () => {
    const { app, token, push } = await setup("pro", { en: { title: "third {{external_id}}" } });
    const r = await create(token, { app_id: app.id, push_id: push, name: "VIP third deposit", type: "event", event_code: "dep3", delay_minutes: 30, filters: { tags: { segment: "vip" } } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ type: "event", event_code: "dep3", delay_minutes: 30, status: "active", next_run_at: null });
    const dd = await webDevice(t, net.peer, app, { ext: "dd", language: "en", tags: { segment: "vip" } });
    const ee = await webDevice(t, net.peer, app, { ext: "ee", language: "en", tags: { segment: "vip" } });
    for (let i = 0; i < 2; i++) for (const x of ["dd", "ee"]) await postback(app.id, `external_id=${x}&event=dep`);
    await s.settle();
    expect(await rowsOf(r.body.id)).toEqual([]);
    for (const x of ["dd", "ee"]) await postback(app.id, `external_id=${x}&event=dep`);
    await s.settle();
    const rows = await rowsOf(r.body.id);
    expect(rows.map((x) => [x.kind, x.eventCode, x.status])).toEqual([
      ["scheduler", "dep3", "pending"],
      ["scheduler", "dep3", "pending"],
    ]);
    expect(await t.ctx.db.select().from(triggerQueue).where(and(eq(triggerQueue.appId, app.id), eq(triggerQueue.kind, "conversion")))).toEqual([]);
    expect((await job("send-due")).body.sends).toBe(0); // not due for 30 minutes
    // ee leaves the audience before the send is due: it is skipped
    await t.ctx.db.update(devices).set({ tags: { segment: "gone" } }).where(eq(devices.id, ee.id));
    const due = new Date(Math.max(...rows.map((x) => x.dueAt.getTime())) + 60_000);
    t.setNow(due);
    try {
      await job("send-due");
    } finally {
      t.setNow(null);
    }
    expect((await rowsOf(r.body.id)).map((x) => x.status)).toEqual(["sent", "sent"]);
    await fannedOut(t);
    await waitFor(() => receivedBy(net.peer, dd.endpoint).length === 1);
    await Bun.sleep(300);
    expect(receivedBy(net.peer, dd.endpoint)[0].title).toBe("third dd");
    expect(receivedBy(net.peer, ee.endpoint)).toEqual([]);
    const made = await sendsOf(r.body.id);
    expect(made.map((x) => x.recipients).sort()).toEqual([0, 1]);
    expect(made.every((x) => x.sendKey.startsWith("event:"))).toBe(true);
    // the latest due instant of its sends (one update per scheduler and batch)
    expect((await t.req("GET", `${S}/${r.body.id}`, { token })).body.last_sent_at).toBe(new Date(due.getTime() - 60_000).toISOString());
  });

  test("event triggers are a plan feature: Free is 403 naming Pro; a downgraded owner's schedulers stop firing (pausing stays allowed); paused ones fire nothing", async () => {
    const free = await setup("free");
    const refused = await create(free.token, { app_id: free.app.id, push_id: free.push, name: "e", type: "event", event_code: "reg" });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe("Event triggers require the Pro plan or above");
    // the other types are on every plan
    expect((await create(free.token, { app_id: free.app.id, push_id: free.push, name: "w", type: "weekly", days_of_week: [5], send_time: "23:17" })).status).toBe(201);

    const { app, token, userId, push } = await setup("pro");
    const sc = (await create(token, { app_id: app.id, push_id: push, name: "welcome", type: "event", event_code: "reg", delay_minutes: 10 })).body;
    const off = (await create(token, { app_id: app.id, push_id: push, name: "off", type: "event", event_code: "reg" })).body;
    expect((await t.req("PATCH", `${S}/${off.id}`, { token, body: { status: "paused" } })).body.status).toBe("paused");
    await postback(app.id, "external_id=a&event=reg");
    await s.settle();
    expect((await rowsOf(sc.id)).map((x) => x.status)).toEqual(["pending"]);
    expect(await rowsOf(off.id)).toEqual([]); // paused: nothing queued
    await t.ctx.db.update(users).set({ plan: "free" }).where(eq(users.id, userId));
    await postback(app.id, "external_id=b&event=reg");
    await s.settle();
    expect(await rowsOf(sc.id)).toHaveLength(1); // b fired nothing
    const due = new Date((await rowsOf(sc.id))[0]!.dueAt.getTime() + 60_000);
    t.setNow(due);
    try {
      await job("send-due");
    } finally {
      t.setNow(null);
    }
    expect((await rowsOf(sc.id)).map((x) => x.status)).toEqual(["skipped"]); // the pending one, too
    expect(await sendsOf(sc.id)).toEqual([]);
    expect((await t.req("PATCH", `${S}/${sc.id}`, { token, body: { delay_minutes: 5 } })).status).toBe(403);
    expect((await t.req("PATCH", `${S}/${off.id}`, { token, body: { status: "active" } })).status).toBe(403);
    expect((await t.req("PATCH", `${S}/${sc.id}`, { token, body: { status: "paused" } })).status).toBe(200);
    expect((await t.req("DELETE", `${S}/${sc.id}`, { token })).status).toBe(204);
  });

  test("send now: once per call (or per Idempotency-Key), to the filtered audience or one test device; refused while paused, archived or past due", async () => {
    const { app, token, userId, push } = await setup();
    const a = await webDevice(t, net.peer, app, { ext: "n1", language: "en", country: "BR" });
    const b = await webDevice(t, net.peer, app, { ext: "n2", language: "en", country: "PT" });
    const sc = (await create(token, { app_id: app.id, push_id: push, name: "weekly BR", type: "weekly", days_of_week: [6], send_time: "23:59", filters: { country: "BR" } })).body;
    const now = await t.req("POST", `${S}/${sc.id}/send`, { token, headers: { "idempotency-key": "k-1" } });
    expect(now.status).toBe(201);
    expect(now.body.scheduler.last_sent_at).toBeString();
    const repeat = await t.req("POST", `${S}/${sc.id}/send`, { token, headers: { "idempotency-key": "k-1" } });
    expect([repeat.status, repeat.body.send_id]).toEqual([200, now.body.send_id]);
    const test1 = await t.req("POST", `${S}/${sc.id}/send`, { token, body: { device_id: b.id } });
    expect(test1.status).toBe(201);
    await fannedOut(t);
    await waitFor(() => receivedBy(net.peer, a.endpoint).length === 1 && receivedBy(net.peer, b.endpoint).length === 1);
    await Bun.sleep(300);
    expect(receivedBy(net.peer, a.endpoint).map((p) => p.msg_id)).toEqual([`${now.body.send_id}.${a.id}`]);
    expect(receivedBy(net.peer, b.endpoint).map((p) => p.msg_id)).toEqual([`${test1.body.send_id}.${b.id}`]);

    const other = await s.app({ platform: "web" });
    const foreignDevice = await webDevice(t, net.peer, other.app, { ext: "z", language: "en" });
    expect((await t.req("POST", `${S}/${sc.id}/send`, { token, body: { device_id: foreignDevice.id } })).status).toBe(404);
    await t.req("PATCH", `${S}/${sc.id}`, { token, body: { status: "paused" } });
    expect((await t.req("POST", `${S}/${sc.id}/send`, { token })).status).toBe(409);
    await t.req("PATCH", `${S}/${sc.id}`, { token, body: { status: "active" } });
    await t.ctx.db.update(users).set({ subscriptionStatus: "past_due" }).where(eq(users.id, userId));
    const pastDue = await t.req("POST", `${S}/${sc.id}/send`, { token });
    expect([pastDue.status, pastDue.body.error]).toEqual([403, "sending is paused while the account is past due: top up the balance to resume"]);
    expect((await create(token, { app_id: app.id, push_id: push, name: "i", type: "instant" })).status).toBe(403);
    await t.ctx.db.update(users).set({ subscriptionStatus: "active" }).where(eq(users.id, userId));
    await t.ctx.db.update(apps).set({ archived: true }).where(eq(apps.id, app.id));
    expect((await t.req("POST", `${S}/${sc.id}/send`, { token })).status).toBe(403);
    expect((await create(token, { app_id: app.id, push_id: push, name: "i", type: "instant" })).status).toBe(403);
    expect(await sendsOf(sc.id)).toHaveLength(2);
  });
});

describe("CRUD", () => {
  test("validation: 400 naming the field", async () => {
    const { app, token, userId, push } = await setup();
    t.setNow(new Date("2030-01-01T00:00:00Z"));
    try {
      const ok = { app_id: app.id, push_id: push, name: "n" };
      const cases: [unknown, RegExp][] = [
        [{ app_id: app.id, push_id: push, type: "instant" }, /^name is required/],
        [{ ...ok, name: "  ", type: "instant" }, /^name must not be empty/],
        [{ ...ok, type: "daily" }, /^type is required: one of instant, once, weekly, event/],
        [{ ...ok, push_id: "x", type: "instant" }, /^push_id/],
        [{ ...ok, type: "once" }, /^send_at is required for once schedulers/],
        [{ ...ok, type: "once", send_at: "tomorrow" }, /^send_at must be an ISO 8601 date-time/],
        [{ ...ok, type: "once", send_at: "2029-12-31T23:59:00Z" }, /^send_at must be in the future/],
        [{ ...ok, type: "once", send_at: "2031-06-01T00:00:00Z" }, /^send_at must be at most a year ahead/],
        [{ ...ok, type: "weekly", send_time: "10:00" }, /^days_of_week is required for weekly schedulers/],
        [{ ...ok, type: "weekly", days_of_week: [7], send_time: "10:00" }, /^days_of_week must be/],
        [{ ...ok, type: "weekly", days_of_week: [1, 1], send_time: "10:00" }, /^days_of_week must be/],
        [{ ...ok, type: "weekly", days_of_week: [1], send_time: "24:00" }, /^send_time must be HH:MM/],
        [{ ...ok, type: "weekly", days_of_week: [1], send_time: "10:00", send_at: "2030-02-01T00:00:00Z" }, /^send_at does not apply to weekly schedulers/],
        [{ ...ok, type: "instant", event_code: "reg" }, /^event_code does not apply to instant schedulers/],
        [{ ...ok, type: "event" }, /^event_code is required for event schedulers/],
        [{ ...ok, type: "event", event_code: "has space" }, /^event_code must be/],
        [{ ...ok, type: "event", event_code: "reg", delay_minutes: 43201 }, /^delay_minutes must be an integer 0 to 43200/],
        [{ ...ok, type: "instant", filters: { country: "USA" } }, /^filters\.country must be a 2-letter/],
        [{ ...ok, type: "instant", filters: { country: "1x" } }, /^filters\.country must be a 2-letter/],
        [{ ...ok, type: "instant", filters: { language: "??" } }, /^filters\.language must be a language code/],
        [{ ...ok, type: "instant", filters: { platform: "tv" } }, /^filters\.platform must be one of/],
        [{ ...ok, type: "instant", filters: { tags: { "bad key": "x" } } }, /^filters\.tags must be/],
        [{ ...ok, type: "instant", filters: { segment: "x" } }, /^filters\.segment is not a filter/],
        [{ ...ok, type: "instant", filter: { country: "US" } }, /^filter is not a scheduler field/],
      ];
      for (const [body, msg] of cases) {
        const r = await create(token, body);
        expect([r.status, r.body.error, JSON.stringify(body)]).toEqual([400, expect.stringMatching(msg), JSON.stringify(body)]);
      }
      // a push of another app of the same account is a 400; of another account a 404
      const second = (await t.req("POST", "/api/v3/apps", { token, body: { name: "second", platform: "android" } })).body;
      const pushOfSecond = await makeTemplate(t, { userId, appId: second.id, defaultLanguage: "en", translations: { en: { title: "x" } } });
      const wrongApp = await create(token, { ...ok, push_id: pushOfSecond, type: "instant" });
      expect([wrongApp.status, wrongApp.body.error]).toEqual([400, `push_id must be a push of app ${app.id}; push ${pushOfSecond} belongs to app ${second.id}`]);
      const stranger = await setup();
      expect((await create(token, { ...ok, push_id: stranger.push, type: "instant" })).status).toBe(404);
      expect((await create(token, { ...ok, app_id: stranger.app.id, type: "instant" })).status).toBe(404);
      const w = await create(token, { ...ok, type: "weekly", days_of_week: [1], send_time: "10:00" });
      expect(w.status).toBe(201);
      for (const [body, msg] of [
        [{ send_at: "2030-02-01T00:00:00Z" }, "send_at does not apply to weekly schedulers"],
        [{ status: "completed" }, "status must be active or paused"],
        [{ paused: true }, "paused is not a scheduler field"],
        [{ filters: { language: "x_y_z_1_2_3_4_5" } }, "filters.language must be a language code such as en or pt-BR"],
        [{ push_id: pushOfSecond }, `push_id must be a push of app ${app.id}; push ${pushOfSecond} belongs to app ${second.id}`],
      ] as [unknown, string][]) {
        const r = await t.req("PATCH", `${S}/${w.body.id}`, { token, body });
        expect([r.status, r.body.error]).toEqual([400, msg]);
      }
      expect((await t.req("GET", `${S}?type=daily`, { token })).status).toBe(400);
      expect((await t.req("GET", `${S}?limit=0`, { token })).status).toBe(400);
      expect((await t.req("GET", `${S}?cursor=zzz`, { token })).status).toBe(400);
    } finally {
      t.setNow(null);
    }
  });

  test("list, get, update, delete: only the caller's schedulers (404 for others'); app-scoped keys reach their app only; keyset pages", async () => {
    const { app, token, userId, push } = await setup("team");
    const second = (await t.req("POST", "/api/v3/apps", { token, body: { name: "second", platform: "web" } })).body;
    const push2 = await makeTemplate(t, { userId, appId: second.id, defaultLanguage: "en", translations: { en: { title: "x" } } });
    const w = (type: string, extra: object = {}) => ({ push_id: push, name: `s-${type}`, type, ...extra });
    const a1 = (await create(token, { app_id: app.id, ...w("weekly", { days_of_week: [0, 3], send_time: "09:00", filters: { platform: "web" } }) })).body;
    const a2 = (await create(token, { app_id: app.id, ...w("event", { event_code: "reg" }) })).body;
    const b1 = (await create(token, { app_id: second.id, ...w("weekly", { push_id: push2, days_of_week: [1], send_time: "09:00" }) })).body;

    expect((await t.req("GET", `${S}/${a1.id}`, { token })).body).toEqual(a1);
    const all = await t.req("GET", S, { token });
    expect(all.body.items.map((x: { id: number }) => x.id)).toEqual([b1.id, a2.id, a1.id]);
    expect((await t.req("GET", `${S}?app_id=${app.id}&type=weekly`, { token })).body.items.map((x: { id: number }) => x.id)).toEqual([a1.id]);
    const p1 = await t.req("GET", `${S}?limit=2`, { token });
    expect(p1.body.items).toHaveLength(2);
    const p2 = await t.req("GET", `${S}?limit=2&cursor=${p1.body.next_cursor}`, { token });
    expect([p2.body.items.map((x: { id: number }) => x.id), p2.body.next_cursor]).toEqual([[a1.id], null]);
    await t.req("PATCH", `${S}/${a2.id}`, { token, body: { status: "paused" } });
    expect((await t.req("GET", `${S}?status=paused`, { token })).body.items.map((x: { id: number }) => x.id)).toEqual([a2.id]);
    const renamed = await t.req("PATCH", `${S}/${a1.id}`, { token, body: { name: " Renamed ", filters: { country: "br" } } });
    expect(renamed.body).toMatchObject({ name: "Renamed", filters: { country: "BR" }, days_of_week: [0, 3] });

    // another account: 404 everywhere, and an empty list
    const other = await t.user({ plan: "team" });
    for (const [m, p] of [["GET", `${S}/${a1.id}`], ["PATCH", `${S}/${a1.id}`], ["DELETE", `${S}/${a1.id}`], ["POST", `${S}/${a1.id}/send`]] as const) {
      const r = await t.req(m, p, { token: other.token, body: m === "PATCH" ? { name: "x" } : undefined });
      expect([m, r.status]).toEqual([m, 404]);
    }
    expect((await t.req("GET", S, { token: other.token })).body).toEqual({ items: [], next_cursor: null });
    expect((await t.req("GET", `${S}?app_id=${app.id}`, { token: other.token })).status).toBe(404);
    expect((await t.req("GET", `${S}/abc`, { token })).status).toBe(404);
    expect((await t.req("GET", S)).status).toBe(401);

    // a key limited to the second app
    const key = (await t.req("POST", "/api/v3/api-keys", { token, body: { name: "second only", app_id: second.id } })).body.key as string;
    expect((await t.req("GET", S, { token: key })).body.items.map((x: { id: number }) => x.id)).toEqual([b1.id]);
    expect((await t.req("GET", `${S}/${a1.id}`, { token: key })).status).toBe(404);
    expect((await t.req("GET", `${S}?app_id=${app.id}`, { token: key })).status).toBe(404);
    expect((await create(key, { app_id: app.id, ...w("instant") })).status).toBe(404);
    expect((await create(key, { app_id: second.id, ...w("weekly", { days_of_week: [1], send_time: "09:00" }) })).status).toBe(404); // the first app's push
    expect((await create(key, { app_id: second.id, ...w("weekly", { push_id: push2, days_of_week: [1], send_time: "09:00" }) })).status).toBe(201);

    expect((await t.req("DELETE", `${S}/${a1.id}`, { token })).status).toBe(204);
    expect((await t.req("GET", `${S}/${a1.id}`, { token })).status).toBe(404);
  });

  test("next_run_at of a weekly scheduler: the next slot strictly after now", () => {
    const mon0959 = new Date("2025-03-03T09:59:00Z"); // a Monday
    expect(nextWeekly([0], "10:00", mon0959)?.toISOString()).toBe("2025-03-03T10:00:00.000Z");
    expect(nextWeekly([0], "10:00", new Date("2025-03-03T10:00:00Z"))?.toISOString()).toBe("2025-03-10T10:00:00.000Z");
    expect(nextWeekly([6, 2], "00:00", mon0959)?.toISOString()).toBe("2025-03-05T00:00:00.000Z");
    expect(nextWeekly([], "00:00", mon0959)).toBeNull();
  });
});
