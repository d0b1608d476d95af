import { sql } from "drizzle-orm";
import { expect } from "bun:test";
import type { TestCore } from "../../testing/harness";
import { utcDay, addDays } from "./money";

/** Test helpers for billing: devices in bulk, money through the admin API, days relative to today. */

/** Days are relative to the real today: accounts are created "now" and only days they existed are charged. */
export const today = () => utcDay(new Date());
export const dayAt = (offset: number, time = "12:00:00") => new Date(`${addDays(today(), offset)}T${time}.000Z`);

export async function admin(t: TestCore) {
  return t.user({ admin: true });
}

/** An app for the account (Team-sized plans allow many; Free allows one). */
export async function createApp(t: TestCore, token: string): Promise<number> {
  const r = await t.req("POST", "/api/v3/apps", { token, body: { name: `app ${Math.random()}`, platform: "android" } });
  expect(r.status).toBe(201);
  return r.body.id;
}

/** n devices on an app, inserted in one statement (the edge's registration path is not under test here). */
export async function addDevices(t: TestCore, appId: number, n: number, prefix = "d") {
  if (n <= 0) return;
  await t.ctx.db.execute(
    sql`insert into devices (app_id, install_token) select ${appId}, ${prefix + "-"} || g from generate_series(1, ${n}::int) g`,
  );
}

export async function adjust(t: TestCore, adminToken: string, userId: number, cents: number, reason = "test credit") {
  const r = await t.req("POST", `/api/v3/admin/users/${userId}/balance-adjustments`, { token: adminToken, body: { amount_cents: cents, reason } });
  expect(r.status).toBe(201);
  return r.body;
}

export async function closeDay(t: TestCore, adminToken: string, at: Date) {
  const r = await t.req("POST", "/api/v3/admin/jobs/billing-close-day", { token: adminToken, body: { at: at.toISOString() } });
  expect(r.status).toBe(200);
  return r.body;
}

export async function balance(t: TestCore, token: string) {
  const r = await t.req("GET", "/api/v3/billing/balance", { token });
  expect(r.status).toBe(200);
  return r.body;
}
