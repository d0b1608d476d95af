import { afterAll, beforeAll, describe, expect, test } from "bun:test";
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

describe("balance and usage", () => {
  test("a new account: balance 0 USD, nothing projected; usage counted live against Free's limits", async () => {
    const u = await t.user();
    expect(await balance(t, u.token)).toEqual({ balance_cents: 0, currency: "USD", projected_daily_cost: 0, days_remaining: 0, plan: "free", status: "active", low_balance: false });
    const usage = (await t.req("GET", "/api/v3/billing/usage", { token: u.token })).body;
    expect(usage).toEqual({ active_installs: 0, total_apps: 0, install_limit: 5000, apps_limit: 1, install_percentage: 0, apps_percentage: 0, snapshot_date: today(), source: "live" });
  });

  test("projected cost and days remaining come from the daily formula at current installs", async () => {
    const u = await t.user({ plan: "pro" });
    const app = await createApp(t, u.token);
    await addDevices(t, app, 6000); // 163.33 + 33 = 196.33 → 196
    await adjust(t, adminToken, u.id, 1000);
    expect(await balance(t, u.token)).toMatchObject({ balance_cents: 1000, projected_daily_cost: 196, days_remaining: 5, low_balance: false });
    const usage = (await t.req("GET", "/api/v3/billing/usage", { token: u.token })).body;
    expect(usage).toMatchObject({ active_installs: 6000, total_apps: 1, install_limit: 50000, apps_limit: 5, install_percentage: 12, apps_percentage: 20, source: "live" });
  });

  test("unlimited limits are null", async () => {
    const u = await t.user({ plan: "team" });
    const usage = (await t.req("GET", "/api/v3/billing/usage", { token: u.token })).body;
    expect(usage).toMatchObject({ install_limit: null, apps_limit: null, install_percentage: 0, apps_percentage: 0 });
  });

  test("billing needs a credential for the whole account", async () => {
    const u = await t.user({ plan: "team" });
    const app = await createApp(t, u.token);
    const key = (await t.req("POST", "/api/v3/api-keys", { token: u.token, body: { name: "one app", app_id: app } })).body.key;
    for (const path of ["balance", "usage", "transactions", "subscription", "top-ups"]) {
      const r = await t.req("GET", `/api/v3/billing/${path}`, { token: key });
      expect(r.status).toBe(403);
      expect(r.body.error).toContain("limited to app");
    }
    const account = (await t.req("POST", "/api/v3/api-keys", { token: u.token, body: { name: "account" } })).body.key;
    expect((await t.req("GET", "/api/v3/billing/balance", { token: account })).status).toBe(200);
    expect((await t.req("GET", "/api/v3/billing/balance")).status).toBe(401);
  });
});

describe("transactions", () => {
  test("fields, newest first, filters by type and by inclusive UTC date range", async () => {
    const u = await t.user({ plan: "pro" });
    await adjust(t, adminToken, u.id, 2000, "welcome credit");
    await closeDay(t, adminToken, dayAt(0));
    await closeDay(t, adminToken, dayAt(1));
    const all = (await t.req("GET", "/api/v3/billing/transactions", { token: u.token })).body;
    expect(all.map((x: any) => x.type)).toEqual(["charge", "charge", "adjustment"]);
    const adj = all[2];
    expect(adj).toMatchObject({ type: "adjustment", amount_cents: 2000, balance_after_cents: 2000, currency: "USD", date: today(), description: "welcome credit", top_up_id: null, refund_of: null });
    expect(typeof adj.id).toBe("number");
    expect(typeof adj.created_at).toBe("string");
    const q = (s: string) => t.req("GET", `/api/v3/billing/transactions?${s}`, { token: u.token });
    expect((await q("type=adjustment")).body.length).toBe(1);
    expect((await q("type=deposit")).body).toEqual([]);
    const tomorrow = addDays(today(), 1);
    expect((await q(`date_from=${tomorrow}`)).body.map((x: any) => x.date)).toEqual([tomorrow]);
    expect((await q(`date_to=${today()}`)).body.length).toBe(2);
    expect((await q(`date_from=${today()}&date_to=${today()}&type=charge`)).body.length).toBe(1);
    expect((await q("limit=1")).body.length).toBe(1);
    const page2 = (await q(`before_id=${all[0].id}`)).body;
    expect(page2.map((x: any) => x.id)).toEqual([all[1].id, all[2].id]);
  });

  test("400 on a bad type or date", async () => {
    const u = await t.user();
    const cases: [string, string][] = [
      ["type=bonus", "type must be one of charge, deposit, refund, adjustment"],
      ["date_from=2025-02-30", "date_from must be a date YYYY-MM-DD"],
      ["date_to=tomorrow", "date_to must be a date YYYY-MM-DD"],
      ["date_from=2025-03-02&date_to=2025-03-01", "date_from must not be after date_to"],
      ["limit=0", "limit must be an integer from 1 to 1000"],
    ];
    for (const [qs, msg] of cases) {
      const r = await t.req("GET", `/api/v3/billing/transactions?${qs}`, { token: u.token });
      expect(r.status).toBe(400);
      expect(r.body.error).toContain(msg);
    }
  });
});

describe("admin: adjustments, refunds, billing view", () => {
  test("balance adjustments: admin only, non-zero integer, never below zero", async () => {
    const u = await t.user();
    const post = (token: string, body: unknown, id = u.id) => t.req("POST", `/api/v3/admin/users/${id}/balance-adjustments`, { token, body });
    expect((await post(u.token, { amount_cents: 100, reason: "self" })).body).toEqual({ error: "admin access required" });
    expect((await post(adminToken, { amount_cents: 0, reason: "x" })).status).toBe(400);
    expect((await post(adminToken, { amount_cents: 10.5, reason: "x" })).status).toBe(400);
    expect((await post(adminToken, { amount_cents: 100 })).body.error).toBe("reason is required");
    expect((await post(adminToken, { amount_cents: 100, reason: "x" }, 999999)).status).toBe(404);
    const credit = await post(adminToken, { amount_cents: 500, reason: "goodwill" });
    expect(credit.status).toBe(201);
    expect(credit.body).toMatchObject({ type: "adjustment", amount_cents: 500, balance_after_cents: 500, balance_cents: 500, description: "goodwill" });
    const debit = await post(adminToken, { amount_cents: -200, reason: "correction" });
    expect(debit.body).toMatchObject({ amount_cents: -200, balance_cents: 300 });
    const tooMuch = await post(adminToken, { amount_cents: -301, reason: "oops" });
    expect(tooMuch.status).toBe(409);
    expect((await balance(t, u.token)).balance_cents).toBe(300);
  });

  test("refunds of a charge credit the balance, never more than the charge; only charges and deposits", async () => {
    const u = await t.user({ plan: "pro" });
    await adjust(t, adminToken, u.id, 1000);
    await closeDay(t, adminToken, dayAt(0));
    const [charge] = (await t.req("GET", "/api/v3/billing/transactions?type=charge", { token: u.token })).body;
    const refund = (body: unknown, id = u.id) => t.req("POST", `/api/v3/admin/users/${id}/refunds`, { token: adminToken, body });
    const part = await refund({ transaction_id: charge.id, amount_cents: 100, reason: "outage" });
    expect(part.status).toBe(201);
    expect(part.body).toMatchObject({ type: "refund", amount_cents: 100, refund_of: charge.id, balance_cents: 1000 - 163 + 100 });
    const rest = await refund({ transaction_id: charge.id, reason: "the rest" });
    expect(rest.body.amount_cents).toBe(63);
    expect((await refund({ transaction_id: charge.id, reason: "again" })).status).toBe(409);
    const [adj] = (await t.req("GET", "/api/v3/billing/transactions?type=adjustment", { token: u.token })).body;
    expect((await refund({ transaction_id: adj.id, reason: "no" })).status).toBe(400);
    expect((await refund({ transaction_id: charge.id, reason: "other account" }, (await t.user()).id)).status).toBe(404);
    expect((await t.req("POST", `/api/v3/admin/users/${u.id}/refunds`, { token: u.token, body: { transaction_id: charge.id, reason: "me" } })).status).toBe(403);
  });

  test("the per-account billing view agrees with the ledger", async () => {
    const u = await t.user({ plan: "pro" });
    await adjust(t, adminToken, u.id, 700);
    await closeDay(t, adminToken, dayAt(0));
    const r = await t.req("GET", `/api/v3/admin/users/${u.id}/billing`, { token: adminToken });
    expect(r.status).toBe(200);
    expect(r.body.user).toMatchObject({ id: u.id, email: u.email });
    expect(r.body.subscription).toMatchObject({ plan: "pro", status: "active" });
    expect(r.body.balance.balance_cents).toBe(537);
    expect(r.body.ledger).toEqual({ sum_cents: 537, balance_cents: 537, consistent: true });
    expect(r.body.days[0]).toMatchObject({ day: today(), plan: "pro", amount_due_cents: 163, charged_cents: 163, balance_after_cents: 537, status: "active" });
    expect(r.body.transactions.length).toBe(2);
    expect((await t.req("GET", `/api/v3/admin/users/${u.id}/billing`, { token: u.token })).status).toBe(403);
    expect((await t.req("GET", `/api/v3/admin/users/abc/billing`, { token: adminToken })).status).toBe(404);
  });
});
