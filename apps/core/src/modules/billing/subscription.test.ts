import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { Subjects } from "@pushstack/schema";
import { startTestCore, type TestCore } from "../../testing/harness";
import { admin, createApp, addDevices, adjust, closeDay, balance, dayAt, today } from "./testkit";
import { addDays } from "./money";

let t: TestCore;
let adminToken: string;
beforeAll(async () => {
  t = await startTestCore();
  adminToken = (await admin(t)).token;
});
afterAll(() => t.close());
afterEach(() => t.setNow(null));

const sub = async (token: string) => (await t.req("GET", "/api/v3/billing/subscription", { token })).body;
const put = (token: string, plan: unknown) => t.req("PUT", "/api/v3/billing/subscription", { token, body: { plan } });
const charges = async (token: string) => ((await t.req("GET", "/api/v3/billing/transactions?type=charge", { token })).body as any[]).sort((a, b) => a.date.localeCompare(b.date));

describe("subscription", () => {
  test("a new account: Free, active, no period", async () => {
    const u = await t.user();
    const s = await sub(u.token);
    expect(s).toEqual({ plan: "free", status: "active", pending_plan: null, current_period_start: null, current_period_end: null, cancel_at_period_end: false, daily_cost_cents: 0 });
  });

  test("bad plan is 400 naming the choices; enterprise is not self-service", async () => {
    const u = await t.user();
    for (const plan of ["gold", "enterprise", 3, null]) {
      const r = await put(u.token, plan);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("plan must be one of free, pro, team");
    }
    expect((await t.req("PUT", "/api/v3/billing/subscription", { token: u.token, body: {} })).body.error).toBe("plan is required");
  });

  test("upgrade: the plan and its features at once, the new rate from the next day", async () => {
    const u = await t.user();
    await adjust(t, adminToken, u.id, 10_000);
    t.setNow(dayAt(0, "15:00:00"));
    const r = await put(u.token, "team");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ plan: "team", status: "active", pending_plan: null, daily_cost_cents: 496 });
    expect(r.body.current_period_start).toBe(`${addDays(today(), 1)}T00:00:00.000Z`);
    expect(r.body.current_period_end).toBe(`${addDays(today(), 31)}T00:00:00.000Z`);
    // a Team feature works at once
    expect((await t.req("POST", "/api/v3/api-keys", { token: u.token, body: { name: "ci" } })).status).toBe(201);
    // the directory carries the new plan
    const app = await createApp(t, u.token);
    const kv = await t.bus.kv(Subjects.appDirectoryBucket);
    expect((await kv.get(String(app)))!.json<any>().plan).toBe("team");
    // today was Free when it started: not charged; tomorrow at Team's rate
    await closeDay(t, adminToken, dayAt(1));
    expect((await charges(u.token)).map((c) => [c.date, c.amount_cents])).toEqual([[addDays(today(), 1), -496]]);
  });

  test("Pro → Team mid-period keeps the period; the rate changes from the next day", async () => {
    const u = await t.user();
    await adjust(t, adminToken, u.id, 10_000);
    t.setNow(dayAt(0, "01:00:00"));
    const pro = (await put(u.token, "pro")).body;
    await closeDay(t, adminToken, dayAt(1));
    t.setNow(dayAt(2, "10:00:00"));
    const team = (await put(u.token, "team")).body;
    expect(team.current_period_end).toBe(pro.current_period_end);
    await closeDay(t, adminToken, dayAt(3));
    expect((await charges(u.token)).map((c) => c.amount_cents)).toEqual([-163, -163, -496]); // days 1, 2 (Pro), 3 (Team)
  });

  test("downgrade: at the end of the period; refused while installs exceed the new plan's limit", async () => {
    const u = await t.user();
    await adjust(t, adminToken, u.id, 100_000);
    t.setNow(dayAt(0, "09:00:00"));
    const up = (await put(u.token, "team")).body;
    const app = await createApp(t, u.token);
    await addDevices(t, app, 5001);
    const refused = await put(u.token, "free");
    expect(refused.status).toBe(409);
    expect(refused.body.error).toContain("the Free plan allows 5000 installs and the account has 5001");
    const down = await put(u.token, "pro");
    expect(down.status).toBe(200);
    expect(down.body).toMatchObject({ plan: "team", pending_plan: "pro", cancel_at_period_end: false, current_period_end: up.current_period_end });
    // still Team until the period ends
    expect((await t.req("POST", "/api/v3/api-keys", { token: u.token, body: { name: "still team" } })).status).toBe(201);
    const end = new Date(up.current_period_end);
    t.setNow(new Date(end.getTime() + 3_600_000));
    const after = await sub(u.token);
    expect(after).toMatchObject({ plan: "pro", pending_plan: null, current_period_start: up.current_period_end });
    expect(new Date(after.current_period_end).getTime() - end.getTime()).toBe(30 * 86_400_000);
    expect((await t.req("POST", "/api/v3/api-keys", { token: u.token, body: { name: "pro now" } })).status).toBe(403);
  });

  test("a downgrade applies to the day that starts at the period end, even when the job runs late", async () => {
    const u = await t.user({ plan: "team" });
    await adjust(t, adminToken, u.id, 100_000);
    t.setNow(dayAt(0, "08:00:00"));
    const s = (await put(u.token, "pro")).body; // period of a plan set directly: from today, 30 days
    expect(s.current_period_end).toBe(`${addDays(today(), 30)}T00:00:00.000Z`);
    await closeDay(t, adminToken, dayAt(0));
    t.setNow(dayAt(31, "00:30:00"));
    // the job stopped after day 0; one late run closes days 1..29 at Team and day 30 at Pro
    await closeDay(t, adminToken, dayAt(30));
    const cs = await charges(u.token);
    expect(cs.length).toBe(31);
    expect(cs.slice(0, 30).every((c) => c.amount_cents === -496)).toBe(true);
    expect(cs[30]).toMatchObject({ date: addDays(today(), 30), amount_cents: -163 });
  });

  test("cancel keeps the plan until the period ends, then Free; choosing the plan again withdraws it", async () => {
    const u = await t.user();
    await adjust(t, adminToken, u.id, 10_000);
    t.setNow(dayAt(0, "10:00:00"));
    const pro = (await put(u.token, "pro")).body;
    const c = await t.req("POST", "/api/v3/billing/subscription/cancel", { token: u.token });
    expect(c.body).toMatchObject({ plan: "pro", pending_plan: "free", cancel_at_period_end: true });
    expect((await put(u.token, "pro")).body).toMatchObject({ plan: "pro", pending_plan: null, cancel_at_period_end: false });
    await t.req("POST", "/api/v3/billing/subscription/cancel", { token: u.token });
    t.setNow(new Date(new Date(pro.current_period_end).getTime() + 1000));
    expect(await sub(u.token)).toMatchObject({ plan: "free", pending_plan: null, current_period_end: null, status: "active", daily_cost_cents: 0 });
    // cancelling Free is a no-op
    expect((await t.req("POST", "/api/v3/billing/subscription/cancel", { token: u.token })).body.plan).toBe("free");
  });

  test("administrators set any plan, Enterprise included (custom pricing: nothing charged per day)", async () => {
    const u = await t.user();
    const r = await t.req("PUT", `/api/v3/admin/users/${u.id}/plan`, { token: adminToken, body: { plan: "enterprise" } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ plan: "enterprise", daily_cost_cents: 0 });
    expect((await t.req("PUT", `/api/v3/admin/users/${u.id}/plan`, { token: u.token, body: { plan: "team" } })).status).toBe(403);
    expect((await t.req("PUT", `/api/v3/admin/users/999999/plan`, { token: adminToken, body: { plan: "team" } })).status).toBe(404);
    expect(await balance(t, u.token)).toMatchObject({ plan: "enterprise", projected_daily_cost: 0, status: "active" });
  });
});
