import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { asc, eq, sql } from "drizzle-orm";
import { activityLog, devices, deviceEvents, triggerQueue, IngestSubjects } from "@pushstack/schema";
import { startTestStack, type TestStack } from "./testing";
import { chooseLanguage } from "./triggers";
import { handleBatch, isPermanent } from "./consumer";
import { countInstalls } from "../billing/limits";

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
});
afterAll(() => s.close());

const get = (qs: string) => s.call("GET", `/postback?${qs}`);

/** An own pack with languages en (fallback) and pt, event pushes as given, attached to the app. */
async function packWith(token: string, appId: number, pushes: Array<{ lang: "en" | "pt"; event_code: string; delay_minutes?: number; title: string }>) {
  const pack = (await s.t.req("POST", "/api/v3/push-packs", { token, body: { name: "Mine", fallback_language: "en" } })).body;
  const langs: Record<string, number> = {};
  for (const code of ["en", "pt"]) langs[code] = (await s.t.req("POST", `/api/v3/push-packs/${pack.id}/languages`, { token, body: { language_code: code } })).body.id;
  const ids: Record<string, number> = {};
  for (const p of pushes) {
    const r = await s.t.req("POST", `/api/v3/push-packs/${pack.id}/languages/${langs[p.lang]}/events`, { token, body: { event_code: p.event_code, delay_minutes: p.delay_minutes, title: p.title } });
    expect(r.status).toBe(201);
    ids[`${p.lang}:${p.event_code}`] = r.body.id;
  }
  const at = await s.t.req("POST", `/api/v3/apps/${appId}/push-packs`, { token, body: { pack_id: pack.id } });
  expect([200, 201]).toContain(at.status);
  return { pack, langs, ids };
}

describe("triggers", () => {
  test("pack event pushes fire on the matching recorded code, after their delay, in the device's pack language", async () => {
    const { app, token } = await s.app({ plan: "pro" });
    const { ids, langs } = await packWith(token, app.id, [
      { lang: "en", event_code: "dep", title: "first deposit" },
      { lang: "en", event_code: "dep3", delay_minutes: 30, title: "third deposit" },
      { lang: "pt", event_code: "dep3", delay_minutes: 30, title: "terceiro" },
      { lang: "en", event_code: "reg", delay_minutes: 5, title: "welcome" },
    ]);
    // device with language pt-BR (server-side), three deposits; another device (no language) registers
    expect((await s.t.req("POST", `/api/v3/apps/${app.id}/devices`, { token, body: { external_id: "br", language: "pt-BR" } })).status).toBe(201);
    for (let i = 0; i < 3; i++) await get(`app_id=${app.id}&external_id=br&event=dep`);
    await get(`app_id=${app.id}&external_id=nolang&event=reg`);
    await s.settle();
    const rows = await s.t.ctx.db.select().from(triggerQueue).where(eq(triggerQueue.appId, app.id)).orderBy(asc(triggerQueue.id));
    const packRows = rows.filter((r) => r.kind === "pack_event");
    // dep (en: the pt language has no dep push, and the device's language is pt: nothing), dep3 in pt, reg in en
    expect(packRows.map((r) => [r.eventCode, r.eventPushId, r.languageId])).toEqual([
      ["dep3", ids["pt:dep3"], langs.pt],
      ["reg", ids["en:reg"], langs.en],
    ]);
    const events = await s.t.ctx.db.select().from(deviceEvents).where(eq(deviceEvents.appId, app.id));
    const dep3 = events.find((e) => e.code === "dep3")!;
    expect(packRows[0]!.dueAt.getTime()).toBe(dep3.at.getTime() + 30 * 60_000);
    const reg = events.find((e) => e.code === "reg")!;
    expect(packRows[1]!.dueAt.getTime()).toBe(reg.at.getTime() + 5 * 60_000);
    // nothing else is queued: no scheduler matches, and no generic `conversion` rows (nothing consumed them)
    expect(rows.filter((r) => r.kind !== "pack_event")).toEqual([]);
  });

  test("the first deposit fires dep, not dep3; an unpublished system pack fires nothing", async () => {
    const { app, token } = await s.app();
    const { ids } = await packWith(token, app.id, [
      { lang: "en", event_code: "dep", title: "first" },
      { lang: "en", event_code: "dep3", title: "third" },
    ]);
    const admin = await s.t.user({ admin: true });
    const sys = (await s.t.req("POST", "/api/v3/admin/push-packs", { token: admin.token, body: { name: "Sys", fallback_language: "en" } })).body;
    const l = (await s.t.req("POST", `/api/v3/admin/push-packs/${sys.id}/languages`, { token: admin.token, body: { language_code: "en" } })).body;
    await s.t.req("POST", `/api/v3/admin/push-packs/${sys.id}/languages/${l.id}/events`, { token: admin.token, body: { event_code: "dep", title: "sys" } });
    await s.t.req("PUT", `/api/v3/admin/push-packs/${sys.id}/publish`, { token: admin.token, body: { is_published: true } });
    expect((await s.t.req("POST", `/api/v3/apps/${app.id}/push-packs`, { token, body: { pack_id: sys.id } })).status).toBe(201);
    await s.t.req("PUT", `/api/v3/admin/push-packs/${sys.id}/publish`, { token: admin.token, body: { is_published: false } });
    await get(`app_id=${app.id}&external_id=x&event=dep`);
    await s.settle();
    const rows = await s.t.ctx.db.select().from(triggerQueue).where(eq(triggerQueue.appId, app.id));
    expect(rows.filter((r) => r.kind === "pack_event").map((r) => r.eventPushId)).toEqual([ids["en:dep"]]);
  });

  test("chooseLanguage: exact, then same primary language (no region preferred), then the fallback", () => {
    const L = [
      { id: 1, code: "en" },
      { id: 2, code: "pt-BR" },
      { id: 3, code: "pt" },
      { id: 4, code: "es-MX" },
    ];
    expect(chooseLanguage("pt-BR", L, "en")?.id).toBe(2);
    expect(chooseLanguage("pt-PT", L, "en")?.id).toBe(3);
    expect(chooseLanguage("es", L, "en")?.id).toBe(4);
    expect(chooseLanguage("de", L, "en")?.id).toBe(1);
    expect(chooseLanguage(null, L, "en")?.id).toBe(1);
    expect(chooseLanguage("de", L, "fr")).toBeNull();
  });
});

describe("idempotency and failures", () => {
  test("a redelivered batch changes nothing twice", async () => {
    const { app } = await s.app();
    const at = new Date().toISOString();
    const items = [
      { kind: "postback", id: "redeliver-1.0", at, app_id: app.id, ip: "10.0.0.1", method: "GET", external_id: "r1", event: "dep", tags: { segment: "a" }, params: {} },
      { kind: "postback", id: "redeliver-1.1", at, app_id: app.id, ip: "10.0.0.1", method: "GET", external_id: "r1", event: "dep", tags: {}, params: {} },
    ];
    const body = JSON.stringify({ v: 1, items });
    // the same items under two message ids: both stored, as after a republish past the dedup window
    await s.t.bus.publish(IngestSubjects.batch, body, { msgId: "m-a" });
    await s.t.bus.publish(IngestSubjects.batch, body, { msgId: "m-b" });
    await s.settle();
    const [d] = await s.t.ctx.db.select().from(devices).where(eq(devices.appId, app.id));
    expect(d!.events).toEqual(["dep", "dep2"]);
    expect(d!.deposits).toBe(2);
    expect(await s.t.ctx.db.select().from(activityLog).where(eq(activityLog.appId, app.id))).toHaveLength(2);
    // each event recorded once (no generic `conversion` rows exist any more to count them by)
    expect(await s.t.ctx.db.select().from(deviceEvents).where(eq(deviceEvents.appId, app.id))).toHaveLength(2);
  });

  test("malformed messages and items are dropped, the valid items of a batch are kept", async () => {
    const { app } = await s.app();
    await s.t.bus.publish(IngestSubjects.batch, "not json");
    await s.t.bus.publish(IngestSubjects.batch, JSON.stringify({ v: 2, items: [] }));
    const good = { kind: "postback", id: "mixed-1.1", at: new Date().toISOString(), app_id: app.id, ip: null, method: "POST", external_id: "ok", event: "reg", tags: {}, params: {} };
    await s.t.bus.publish(IngestSubjects.batch, JSON.stringify({ v: 1, items: [{ kind: "postback", id: "mixed-1.0" }, { kind: "nope" }, good] }));
    await s.settle();
    expect((await s.t.ctx.db.select().from(devices).where(eq(devices.appId, app.id))).map((d) => d.externalId)).toEqual(["ok"]);
  });

  test("a failing item makes the batch retry; a deterministic failure is dropped after 3 deliveries", async () => {
    const { app } = await s.app();
    const settled: string[] = [];
    const msg = (deliveryCount: number, items: unknown[]) => ({
      subject: IngestSubjects.batch,
      data: new Uint8Array(),
      headers: {},
      seq: 1,
      deliveryCount,
      json: <T>() => ({ v: 1, items }) as T,
      ack: () => settled.push("ack"),
      nak: () => settled.push("nak"),
      term: () => settled.push("term"),
      working: () => {},
    });
    // a tz_sec beyond int4 passes the message schema but fails in the database, every time (SQLSTATE 22003)
    const bad = { kind: "info", id: "poison.0", at: new Date().toISOString(), app_id: app.id, device_id: 1, platform: "web", tz_sec: 2 ** 40 };
    const ok = { kind: "postback", id: "poison.1", at: new Date().toISOString(), app_id: app.id, ip: null, method: "GET", external_id: "after", event: null, tags: {}, params: {} };
    for (const delivery of [1, 2]) {
      let thrown: unknown = null;
      await handleBatch(s.t.ctx, msg(delivery, [bad, ok])).catch((e) => (thrown = e));
      expect(isPermanent(thrown)).toBe(true);
      expect(settled).toEqual([]); // thrown: the bus naks it
    }
    await handleBatch(s.t.ctx, msg(3, [bad, ok]));
    expect(settled).toEqual(["ack"]);
    // the good item, applied on whichever delivery got to it, counts once
    expect((await s.t.ctx.db.select().from(devices).where(eq(devices.appId, app.id))).map((d) => d.externalId)).toEqual(["after"]);
    expect(await s.t.ctx.db.select().from(activityLog).where(eq(activityLog.appId, app.id))).toHaveLength(1);
  });

  test("a new device past the install cap: the postback is logged as refused; existing devices keep working", async () => {
    const { app, token, userId } = await s.app();
    await get(`app_id=${app.id}&external_id=old&event=reg`);
    await s.settle();
    // fill the Free plan's 5,000 installs
    await s.t.ctx.db.execute(
      sql`insert into devices (app_id, install_token, external_id) select ${app.id}, 'bulk-' || g, 'bulk-' || g from generate_series(1, 4999) g`,
    );
    await get(`app_id=${app.id}&external_id=new-one&event=reg`);
    await get(`app_id=${app.id}&external_id=old&event=dep`);
    await s.settle();
    const log = await s.t.req("GET", `/api/v3/apps/${app.id}/activity?limit=2`, { token });
    const refused = log.body.items.find((i: any) => i.external_id === "new-one");
    expect(refused.outcome).toBe("refused");
    expect(refused.message).toContain("Pro");
    expect(refused.devices).toEqual([]);
    const old = log.body.items.find((i: any) => i.external_id === "old");
    expect(old.outcome).toBe("recorded");
    expect(old.devices[0].event).toBe("dep");
    expect(await countInstalls(s.t.ctx.db, userId)).toBe(5000);
  });
});
