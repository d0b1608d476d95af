import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { billingDays, Subjects } from "@pushstack/schema";
import { startTestCore, type TestCore } from "../../testing/harness";
import { admin, createApp, addDevices, adjust, closeDay, balance, dayAt, today } from "./testkit";
import { addDays } from "./money";
import { canSend } from "./limits";

let t: TestCore;
let adminToken: string;
beforeAll(async () => {
  t = await startTestCore();
  adminToken = (await admin(t)).token;
});
afterAll(() => t.close());

const transactions = async (token: string, q = "") => (await t.req("GET", `/api/v3/billing/transactions${q}`, { token })).body as any[];

describe("billing-close-day", () => {
  test("charges the day once: a re-run for the same day changes nothing", async () => {
    const u = await t.user({ plan: "pro" });
    await adjust(t, adminToken, u.id, 1000);
    const first = await closeDay(t, adminToken, dayAt(0));
    expect(first).toMatchObject({ job: "billing-close-day", day: today() });
    expect(first.closed).toBeGreaterThanOrEqual(1);
    expect((await balance(t, u.token)).balance_cents).toBe(1000 - 163);
    const again = await closeDay(t, adminToken, dayAt(0, "23:59:59"));
    expect(again.closed).toBe(0);
    expect(again.charged_cents).toBe(0);
    expect(again.already_closed).toBe(again.accounts);
    expect((await balance(t, u.token)).balance_cents).toBe(837);
    const charges = await transactions(u.token, "?type=charge");
    expect(charges.length).toBe(1);
    expect(charges[0]).toMatchObject({ type: "charge", amount_cents: -163, balance_after_cents: 837, date: today(), currency: "USD" });
    expect(charges[0].details).toMatchObject({ plan: "pro", installs: 0, amount_due_cents: 163 });
  });

  test("snapshots installs: 5,000 included, 5,001 and 50,000 with overage, on Pro and Team", async () => {
    const cases = [
      { plan: "pro", installs: 5000, cents: 163 },
      { plan: "pro", installs: 5001, cents: 163 },
      { plan: "team", installs: 5001, cents: 496 },
      { plan: "team", installs: 50000, cents: 1711 },
      { plan: "pro", installs: 50000, cents: 1648 },
    ];
    for (const c of cases) {
      const u = await t.user({ plan: c.plan });
      const app = await createApp(t, u.token);
      await addDevices(t, app, c.installs);
      await adjust(t, adminToken, u.id, 100_000);
      await closeDay(t, adminToken, dayAt(0));
      expect((await balance(t, u.token)).balance_cents).toBe(100_000 - c.cents);
      const [snap] = await t.ctx.db.select().from(billingDays).where(eq(billingDays.userId, u.id));
      expect(snap).toMatchObject({ installs: c.installs, apps: 1, plan: c.plan, amountDueCents: c.cents, chargedCents: c.cents });
      const usage = (await t.req("GET", "/api/v3/billing/usage", { token: u.token })).body;
      expect(usage).toMatchObject({ active_installs: c.installs, total_apps: 1, source: "snapshot", snapshot_date: today() });
    }
  });

  test("a missed day is charged when the job catches up", async () => {
    const u = await t.user({ plan: "pro" });
    await adjust(t, adminToken, u.id, 5000);
    await closeDay(t, adminToken, dayAt(0));
    // the job did not run for tomorrow; the run for the day after closes both
    const r = await closeDay(t, adminToken, dayAt(2));
    expect(r.day).toBe(addDays(today(), 2));
    expect(r.caught_up_days).toBeGreaterThanOrEqual(1);
    const days = (await transactions(u.token, "?type=charge")).map((x) => x.date).sort();
    expect(days).toEqual([today(), addDays(today(), 1), addDays(today(), 2)]);
    expect((await balance(t, u.token)).balance_cents).toBe(5000 - 3 * 163);
  });

  test("a day before the account existed is not charged", async () => {
    const u = await t.user({ plan: "pro" });
    await adjust(t, adminToken, u.id, 1000);
    await closeDay(t, adminToken, dayAt(-3));
    expect((await balance(t, u.token)).balance_cents).toBe(1000);
  });

  test("Free costs nothing and never goes past_due, even at a zero balance with 5,000 installs", async () => {
    const u = await t.user();
    const app = await createApp(t, u.token);
    await addDevices(t, app, 5000);
    await closeDay(t, adminToken, dayAt(0));
    const b = await balance(t, u.token);
    expect(b).toMatchObject({ balance_cents: 0, projected_daily_cost: 0, status: "active", plan: "free" });
    expect(await transactions(u.token)).toEqual([]);
    expect(await canSend(t.ctx, u.id)).toBe(true);
  });

  test("past_due when the balance cannot cover the next day: sending pauses, data kept; a credit resumes it", async () => {
    const u = await t.user({ plan: "pro" });
    const app = await createApp(t, u.token);
    await addDevices(t, app, 10);
    await adjust(t, adminToken, u.id, 200);
    const kv = await t.bus.kv(Subjects.appDirectoryBucket);
    const r = await closeDay(t, adminToken, dayAt(0));
    expect(r.past_due).toBeGreaterThanOrEqual(1);
    // 200 - 163 = 37 left: not enough for tomorrow
    expect(await balance(t, u.token)).toMatchObject({ balance_cents: 37, status: "past_due" });
    expect(await canSend(t.ctx, u.id)).toBe(false);
    expect((await kv.get(String(app)))!.json<any>().subscription_status).toBe("past_due");
    expect((await t.req("GET", `/api/v3/apps/${app}`, { token: u.token })).status).toBe(200); // data kept

    // a day that starts past_due had sending paused: not charged
    await closeDay(t, adminToken, dayAt(1));
    expect((await balance(t, u.token)).balance_cents).toBe(37);

    // a credit that covers a day: active again, sending resumes by itself
    await adjust(t, adminToken, u.id, 1000);
    expect(await balance(t, u.token)).toMatchObject({ balance_cents: 1037, status: "active" });
    expect(await canSend(t.ctx, u.id)).toBe(true);
    expect((await kv.get(String(app)))!.json<any>().subscription_status).toBe("active");
  });

  test("when installs outgrow the balance during the day, the balance pays what it can and the account goes past_due", async () => {
    const u = await t.user({ plan: "pro" });
    const app = await createApp(t, u.token);
    await adjust(t, adminToken, u.id, 1000);
    await addDevices(t, app, 50000); // 1648 cents a day now
    await closeDay(t, adminToken, dayAt(0));
    expect(await balance(t, u.token)).toMatchObject({ balance_cents: 0, status: "past_due" });
    const [charge] = await transactions(u.token, "?type=charge");
    expect(charge).toMatchObject({ amount_cents: -1000, balance_after_cents: 0 });
    expect(charge.details.amount_due_cents).toBe(1648);
  });
});

describe("admin jobs endpoint", () => {
  test("admin only; unknown job 404; bad `at` 400; `at` defaults to now", async () => {
    const u = await t.user();
    expect((await t.req("POST", "/api/v3/admin/jobs/billing-close-day", { token: u.token, body: {} })).body).toEqual({ error: "admin access required" });
    expect((await t.req("POST", "/api/v3/admin/jobs/billing-close-day", { body: {} })).status).toBe(401);
    expect((await t.req("POST", "/api/v3/admin/jobs/nope", { token: adminToken, body: {} })).status).toBe(404);
    for (const at of ["yesterday", "2025-13-01T00:00:00Z", 12, "2025-01-01"]) {
      const r = await t.req("POST", "/api/v3/admin/jobs/billing-close-day", { token: adminToken, body: { at } });
      expect(r.status).toBe(400);
      expect(r.body.error).toContain("at must");
    }
    const r = await t.req("POST", "/api/v3/admin/jobs/billing-close-day", { token: adminToken });
    expect(r.status).toBe(200);
    expect(r.body.day).toBe(today());
    const list = await t.req("GET", "/api/v3/admin/jobs", { token: adminToken });
    expect(list.body.map((j: any) => j.name)).toEqual(expect.arrayContaining(["billing-close-day", "billing-expire-top-ups", "billing-mail"]));
  });
});
