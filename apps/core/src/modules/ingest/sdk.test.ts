import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { devices, deviceEvents, notificationEvents } from "@pushstack/schema";
import { startTestStack, type TestStack } from "./testing";

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
});
afterAll(() => s.close());

const V3 = (appId: number) => `/api/v3/apps/${appId}/instances`;
const deviceById = async (id: number) => (await s.t.ctx.db.select().from(devices).where(eq(devices.id, id)))[0]!;
const deviceIdOf = (icId: string) => Number(icId.split("-")[0]);

async function registered(appId: number, icToken = `ic-${crypto.randomUUID()}`, extId?: string) {
  const r = await s.call("POST", V3(appId), { ic_token: icToken, ext_id: extId });
  expect(r.status).toBe(200);
  return r.body.id as string;
}

describe("registration", () => {
  test("answers id and a truthful just_created; the same ic_token gets the same id", async () => {
    const { app } = await s.app();
    const a = await s.call("POST", V3(app.id), { ic_token: "550e8400-e29b-41d4-a716-446655440000", ext_id: "user-1" });
    expect(a.status).toBe(200);
    expect(typeof a.body.id).toBe("string");
    expect(a.body.just_created).toBe(true);
    const b = await s.call("POST", V3(app.id), { ic_token: "550e8400-e29b-41d4-a716-446655440000", ext_id: "user-1" });
    expect(b.body).toEqual({ id: a.body.id, just_created: false });
    const d = await deviceById(deviceIdOf(a.body.id));
    expect(d.installToken).toBe("550e8400-e29b-41d4-a716-446655440000");
    expect(d.externalId).toBe("user-1");
    expect(d.source).toBe("sdk");
    expect(d.platform).toBe("android"); // the app's, until the SDK sends its info
  });

  test("ic_token: any string up to 255 characters; ext_id optional, updated on a later registration", async () => {
    const { app } = await s.app();
    const long = "x".repeat(255);
    const r = await s.call("POST", V3(app.id), { ic_token: long });
    expect(r.status).toBe(200);
    expect(r.body.just_created).toBe(true);
    const again = await s.call("POST", V3(app.id), { ic_token: long, ext_id: "later" });
    expect(again.body.just_created).toBe(false);
    expect((await deviceById(deviceIdOf(r.body.id))).externalId).toBe("later");
    const tooLong = await s.call("POST", V3(app.id), { ic_token: "x".repeat(256) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toEqual({ error: "ic_token is required: 1 to 255 characters" });
    expect((await s.call("POST", V3(app.id), {})).body).toEqual({ error: "ic_token is required" });
    expect((await s.call("POST", V3(app.id), { ic_token: "" })).status).toBe(400);
  });

  test("unknown app 404, archived app 403, before the body is looked at", async () => {
    const { app, token } = await s.app();
    expect(await s.call("POST", V3(987654), {})).toMatchObject({ status: 404, body: { error: "app not found" } });
    expect(await s.call("POST", "/api/v3/apps/abc/instances", {})).toMatchObject({ status: 404, body: { error: "app not found" } });
    await s.t.req("PATCH", `/api/v3/apps/${app.id}`, { token, body: { archived: true } });
    for (let i = 0; i < 200 && !s.edge.directory.known(app.id)?.archived; i++) await Bun.sleep(5);
    expect(await s.call("POST", V3(app.id), {})).toMatchObject({ status: 403, body: { error: "app is archived" } });
  });

  test("the legacy /api/b/v2 paths behave as their v3 twins", async () => {
    const { app } = await s.app();
    const r = await s.call("POST", `/api/b/v2/apps/${app.id}/instances`, { ic_token: "legacy-1" });
    expect(r.body.just_created).toBe(true);
    const v3 = await s.call("POST", V3(app.id), { ic_token: "legacy-1" });
    expect(v3.body).toEqual({ id: r.body.id, just_created: false });
    const info = await s.call("PUT", `/api/b/v2/apps/${app.id}/instances/${r.body.id}/info`, { platform_type: "android", transport_token: "fcm-tok" });
    expect(info.status).toBe(200);
    expect((await s.call("PUT", `/api/b/v2/apps/${app.id}/instances/${r.body.id}/info`, { platform_type: "ios", transport_type: "fcm" })).status).toBe(400);
  });

  test("past the install cap a new registration is 403 naming Pro; existing devices keep working", async () => {
    const { app, userId } = await s.app();
    const known = await registered(app.id, "before-cap");
    const { sql } = await import("drizzle-orm");
    await s.t.ctx.db.execute(sql`insert into devices (app_id, install_token) select ${app.id}, 'bulk-' || g from generate_series(1, 4999) g`);
    const r = await s.call("POST", V3(app.id), { ic_token: "one-too-many" });
    expect(r.status).toBe(403);
    expect(r.body.error).toContain("Pro");
    expect(r.body.error).toContain("5000");
    expect((await s.call("POST", V3(app.id), { ic_token: "before-cap" })).body).toEqual({ id: known, just_created: false });
    expect((await s.call("PUT", `${V3(app.id)}/${known}/info`, { platform_type: "android" })).status).toBe(200);
    void userId;
  });
});

describe("device info", () => {
  test("stored as sent, normalised; fields left out are kept", async () => {
    const { app } = await s.app({ platform: "web" });
    const ic = await registered(app.id);
    const sub = { endpoint: "https://fcm.googleapis.com/fcm/send/abc", keys: { p256dh: "BNc", auth: "tBH" }, expirationTime: null };
    const r = await s.call("PUT", `${V3(app.id)}/${ic}/info`, {
      platform_type: "web",
      transport_type: "webpush",
      transport_token: sub,
      lang: "pt_br",
      country: "br",
      tz_sec: -10800,
      model: "Chrome 120",
      tags: { level: "7" },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: "ok", refresh_interval_sec: 86400 });
    await s.settle();
    const d = await deviceById(deviceIdOf(ic));
    expect([d.platform, d.transportType, d.language, d.country, d.tzSec, d.model]).toEqual(["web", "webpush", "pt-BR", "BR", -10800, "Chrome 120"]);
    expect(JSON.parse(d.transportToken!)).toEqual({ endpoint: sub.endpoint, keys: sub.keys });
    expect(d.tags).toEqual({ level: "7" });
    await s.call("PUT", `${V3(app.id)}/${ic}/info`, { platform_type: "web", tz_sec: 3600, tags: { level: "" } });
    await s.settle();
    const d2 = await deviceById(d.id);
    expect([d2.language, d2.country, d2.tzSec, d2.tags]).toEqual(["pt-BR", "BR", 3600, {}]);
    expect(d2.transportToken).toBe(d.transportToken);
    // an empty token clears it
    await s.call("PUT", `${V3(app.id)}/${ic}/info`, { platform_type: "web", transport_token: "" });
    await s.settle();
    expect((await deviceById(d.id)).transportToken).toBeNull();
  });

  test("the platform/transport pairing is enforced", async () => {
    const { app } = await s.app();
    const ic = await registered(app.id);
    const put = (b: unknown) => s.call("PUT", `${V3(app.id)}/${ic}/info`, b);
    for (const [platform, transport] of [["android", "fcm"], ["ios", "apns"], ["web", "webpush"]] as const) {
      const token = transport === "webpush" ? JSON.stringify({ endpoint: "https://push.example/x", keys: { p256dh: "a", auth: "b" } }) : "tok123";
      expect((await put({ platform_type: platform, transport_type: transport, transport_token: token })).status).toBe(200);
      for (const other of ["fcm", "apns", "webpush"].filter((t) => t !== transport)) {
        const r = await put({ platform_type: platform, transport_type: other, transport_token: token });
        expect(r.status).toBe(400);
        expect(r.body).toEqual({ error: `transport_type must be ${transport} for platform_type ${platform}` });
      }
    }
    expect((await put({ platform_type: "windows" })).body).toEqual({ error: "platform_type must be one of android, ios, web" });
    expect((await put({ transport_type: "fcm" })).body).toEqual({ error: "platform_type is required" });
    expect((await put({ platform_type: "android", transport_type: "sms" })).body).toEqual({ error: "transport_type must be one of fcm, apns, webpush" });
    expect((await put({ platform_type: "android", country: "Brazil" })).body).toEqual({ error: "country must be a 2-letter ISO 3166-1 code" });
    expect((await put({ platform_type: "android", lang: "not a language" })).body).toEqual({ error: "lang must be a language code such as en or pt-BR" });
    expect((await put({ platform_type: "android", tz_sec: 99999 })).status).toBe(400);
    expect((await put({ platform_type: "web", transport_token: "not-a-subscription" })).body.error).toContain("web push subscription");
  });

  test("an instance id not issued for this app is 404", async () => {
    const a = await s.app();
    const b = await s.app();
    const ic = await registered(a.app.id);
    for (const bad of ["123", "1-0000000000000000", `${ic}0`, "x".repeat(300)]) {
      expect(await s.call("PUT", `${V3(a.app.id)}/${bad}/info`, { platform_type: "android" })).toMatchObject({ status: 404, body: { error: "instance not found" } });
    }
    // another app's instance
    expect((await s.call("PUT", `${V3(b.app.id)}/${ic}/info`, { platform_type: "android" })).status).toBe(404);
    expect((await s.call("POST", `${V3(b.app.id)}/${ic}/events`, { event: "onscreen" })).status).toBe(404);
  });
});

describe("SDK events", () => {
  test("delivered and clicked are recorded once per push", async () => {
    const { app } = await s.app();
    const ic = await registered(app.id);
    const note = (event: string, msg_id = "m-1") => s.call("POST", `${V3(app.id)}/${ic}/events/notification`, { msg_id, event });
    expect((await note("delivered")).body).toEqual({ status: "ok" });
    expect((await note("clicked")).status).toBe(200);
    expect((await note("clicked")).status).toBe(200);
    expect((await note("opened")).body).toEqual({ error: "event must be delivered or clicked" });
    expect((await s.call("POST", `${V3(app.id)}/${ic}/events/notification`, { event: "clicked" })).body).toEqual({ error: "msg_id is required" });
    await s.settle();
    const rows = await s.t.ctx.db.select().from(notificationEvents).where(eq(notificationEvents.deviceId, deviceIdOf(ic)));
    expect(rows.map((r) => `${r.msgId}:${r.event}`).sort()).toEqual(["m-1:clicked", "m-1:delivered"]);
  });

  test("lifecycle and custom events are recorded (deposits numbered) and mark the device active", async () => {
    const { app } = await s.app();
    const ic = await registered(app.id);
    const before = (await deviceById(deviceIdOf(ic))).lastActiveAt;
    await Bun.sleep(5);
    for (const event of ["onscreen", "background", "closed", "level_up", "dep", "dep", "onscreen"]) {
      expect((await s.call("POST", `${V3(app.id)}/${ic}/events`, { event, data: { n: 1 } })).body).toEqual({ status: "ok" });
    }
    expect((await s.call("POST", `${V3(app.id)}/${ic}/events`, { event: "clicked" })).status).toBe(400);
    expect((await s.call("POST", `${V3(app.id)}/${ic}/events`, { event: "has space" })).status).toBe(400);
    await s.settle();
    const d = await deviceById(deviceIdOf(ic));
    expect(d.events).toEqual(["onscreen", "background", "closed", "level_up", "dep", "dep2"]);
    expect(d.lastActiveAt.getTime()).toBeGreaterThan(before.getTime());
    const rows = await s.t.ctx.db.select().from(deviceEvents).where(eq(deviceEvents.deviceId, d.id));
    expect(rows).toHaveLength(7);
    expect(rows.every((r) => r.source === "sdk")).toBe(true);
  });

  test("the SDK rate limit is per app_id: 429 with Retry-After past it", async () => {
    const limited = await startTestStack({ SDK_RATE_LIMIT: "4" });
    try {
      const a = await limited.app();
      const b = await limited.app();
      const t0 = performance.now();
      const rs = await Promise.all(Array.from({ length: 9 }, (_, i) => limited.call("POST", V3(a.app.id), { ic_token: `t${i}` })));
      const refills = Math.floor((performance.now() - t0) / 250); // one token per 250 ms at 4/s
      const refused = rs.filter((r) => r.status === 429);
      expect(refused.length).toBeGreaterThanOrEqual(Math.max(1, 5 - refills));
      expect(rs.filter((r) => r.status === 200).length).toBeLessThanOrEqual(4 + refills);
      expect(refused[0]!.body).toEqual({ error: "rate limit exceeded: at most 4 requests per second per app_id" });
      expect(Number(refused[0]!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      // another app has its own budget
      expect((await limited.call("POST", V3(b.app.id), { ic_token: "other" })).status).toBe(200);
      // the legacy path shares the app's budget and counts each request once
      const c = await limited.app();
      const t1 = performance.now();
      const legacy = await Promise.all(Array.from({ length: 4 }, (_, i) => limited.call("POST", `/api/b/v2/apps/${c.app.id}/instances`, { ic_token: `l${i}` })));
      const last = await limited.call("POST", V3(c.app.id), { ic_token: "l9" });
      expect(legacy.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      if (performance.now() - t1 < 250) expect(last.status).toBe(429); // (no token refilled meanwhile)
    } finally {
      await limited.close();
    }
  });
});

test("the edge's routes are in its OpenAPI document, with their schemas", async () => {
  const spec = (await s.call("GET", "/openapi.json")).body;
  const pb = spec.paths["/postback"];
  expect(pb.get.parameters.map((p: any) => p.name)).toEqual(["app_id", "token", "external_id", "install_id", "gaid", "idfa", "event", "segment", "webmaster", "offer"]);
  expect(Object.keys(pb.post.requestBody.content)).toContain("application/x-www-form-urlencoded");
  const reg = spec.paths["/api/v3/apps/{app_id}/instances"].post;
  expect(JSON.stringify(reg.requestBody)).toContain("ic_token");
  expect(JSON.stringify(reg.responses["200"])).toContain("just_created");
  const info = spec.paths["/api/v3/apps/{app_id}/instances/{ic_id}/info"].put;
  for (const f of ["platform_type", "transport_type", "transport_token", "lang", "country", "tz_sec"]) expect(JSON.stringify(info.requestBody)).toContain(f);
  expect(spec.paths["/api/v3/apps/{app_id}/instances/{ic_id}/events/notification"].post).toBeDefined();
  expect(spec.paths["/api/v3/apps/{app_id}/instances/{ic_id}/events"].post).toBeDefined();
  expect(spec.paths["/api/b/v2/apps/{app_id}/instances"].post.deprecated).toBe(true);
});
