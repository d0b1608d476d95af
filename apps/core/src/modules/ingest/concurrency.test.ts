import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { activityLog, deviceEvents, devices, type IngestPostback } from "@pushstack/schema";
import { startTestStack, type TestStack } from "./testing";
import { processItem } from "./consumer";
import { countInstalls } from "../billing/limits";

/** Races that must come out right on PostgreSQL (row locks, unique keys); PGlite runs them serialised. */
let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
});
afterAll(() => s.close());

test("20 simultaneous registrations of one ic_token: exactly one just_created, one id", async () => {
  const { app } = await s.app();
  const rs = await Promise.all(Array.from({ length: 20 }, () => s.call("POST", `/api/v3/apps/${app.id}/instances`, { ic_token: "same-token", ext_id: "u" })));
  expect(rs.map((r) => r.status)).toEqual(Array(20).fill(200));
  expect(rs.filter((r) => r.body.just_created === true)).toHaveLength(1);
  expect(new Set(rs.map((r) => r.body.id)).size).toBe(1);
  expect(await s.t.ctx.db.select().from(devices).where(eq(devices.appId, app.id))).toHaveLength(1);
});

test("10 simultaneous deposit postbacks of one device: dep .. dep10, no gap, no repeat", async () => {
  const { app } = await s.app();
  const rs = await Promise.all(Array.from({ length: 10 }, () => s.call("GET", `/postback?app_id=${app.id}&external_id=whale&event=dep`)));
  expect(rs.every((r) => r.status === 200)).toBe(true);
  await s.settle();
  const [d, ...more] = await s.t.ctx.db.select().from(devices).where(eq(devices.appId, app.id));
  expect(more).toEqual([]);
  const want = ["dep", ...Array.from({ length: 9 }, (_, i) => `dep${i + 2}`)];
  expect(d!.events).toEqual(want);
  const codes = (await s.t.ctx.db.select().from(deviceEvents).where(eq(deviceEvents.deviceId, d!.id))).map((e) => e.code);
  expect(codes.sort()).toEqual([...want].sort());
});

for (const existing of [true, false]) {
  test(`10 deposits in concurrent transactions (${existing ? "existing device" : "new device"}), then all redelivered at once`, async () => {
    const { app } = await s.app();
    const at = new Date().toISOString();
    const item = (id: string, event: string): IngestPostback => ({ kind: "postback", id, at, app_id: app.id, ip: null, method: "GET", external_id: "racer", event, tags: {}, params: {} });
    // an existing device is only row-locked; a new one is also created under the account's install lock
    if (existing) await processItem(s.t.ctx, item(`race-${app.id}.reg`, "reg"));
    const items = Array.from({ length: 10 }, (_, i) => item(`race-${app.id}.${i}`, "dep"));
    await Promise.all(items.map((it) => processItem(s.t.ctx, it)));
    await Promise.all(items.map((it) => processItem(s.t.ctx, it)));
    const ds = await s.t.ctx.db.select().from(devices).where(eq(devices.appId, app.id));
    expect(ds).toHaveLength(1);
    expect(ds[0]!.deposits).toBe(10);
    const codes = (await s.t.ctx.db.select().from(deviceEvents).where(eq(deviceEvents.deviceId, ds[0]!.id))).map((e) => e.code).sort();
    expect(codes).toEqual([...(existing ? ["reg"] : []), "dep", ...Array.from({ length: 9 }, (_, i) => `dep${i + 2}`)].sort());
    const log = await s.t.ctx.db.select().from(activityLog).where(eq(activityLog.appId, app.id));
    expect(log).toHaveLength(existing ? 11 : 10);
    // exactly one activity entry created the device
    expect(log.filter((l) => l.devices[0]?.created)).toHaveLength(1);
  });
}

test("concurrent new devices at the install cap: exactly the free slots are taken", async () => {
  const { app, userId } = await s.app();
  await s.t.ctx.db.execute(sql`insert into devices (app_id, install_token) select ${app.id}, 'bulk-' || g from generate_series(1, 4995) g`);
  const rs = await Promise.all(Array.from({ length: 12 }, (_, i) => s.call("POST", `/api/v3/apps/${app.id}/instances`, { ic_token: `late-${i}` })));
  expect(rs.filter((r) => r.status === 200)).toHaveLength(5);
  expect(rs.filter((r) => r.status === 403)).toHaveLength(7);
  expect(await countInstalls(s.t.ctx.db, userId)).toBe(5000);
});
