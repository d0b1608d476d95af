import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { startBtcpayPeer, type BtcpayPeer } from "@pushstack/testing";
import { startTestCore, type TestCore } from "../../testing/harness";
import { admin, closeDay, balance, dayAt } from "./testkit";

let t: TestCore;
let peer: BtcpayPeer;
let adminToken: string;
const WEBHOOK = "/api/v3/billing/webhooks/btcpay";

beforeAll(async () => {
  // the peer posts its webhooks straight into core's routes
  peer = await startBtcpayPeer({ deliver: async (body, headers) => ({ status: (await t.req("POST", WEBHOOK, { rawBody: body, headers })).status }) });
  t = await startTestCore(peer.env);
  adminToken = (await admin(t)).token;
});
afterAll(async () => {
  await t.close();
  await peer.close();
});
afterEach(() => t.setNow(null));

const topUp = (token: string, body: unknown) => t.req("POST", "/api/v3/billing/top-ups", { token, body });
const get = async (token: string, id: number) => (await t.req("GET", `/api/v3/billing/top-ups/${id}`, { token })).body;

describe("crypto top-up", () => {
  test("an invoice per top-up: its own address, the exact amount, expiring in an hour", async () => {
    const u = await t.user();
    const a = await topUp(u.token, { amount_cents: 2500, currency: "BTC" });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ amount_cents: 2500, currency: "BTC", status: "pending", payment_method: "BTC-CHAIN", credited_at: null });
    // 25.00 USD at 65,000.00 USD/BTC, rounded up to a satoshi
    expect(a.body.crypto_amount).toBe("0.00038462");
    expect(a.body.payment_address).toMatch(/^bcrt1q/);
    const inv = peer.invoices.get(a.body.invoice_id)!;
    expect(inv).toMatchObject({ amount: "25.00", currency: "USD" });
    expect(inv.checkout.expirationMinutes).toBe(60);
    expect(new Date(a.body.expires_at).getTime() - Date.now()).toBeGreaterThan(59 * 60_000);
    const b = await topUp(u.token, { amount_usd: "25.00", currency: "BTC" });
    expect(b.body.payment_address).not.toBe(a.body.payment_address);
    const eth = await topUp(u.token, { amount_usd: 10, currency: "ETH" });
    expect(eth.body).toMatchObject({ amount_cents: 1000, currency: "ETH", crypto_amount: "0.003125000000000000" });
    expect(eth.body.payment_address).toMatch(/^0x[0-9a-f]{40}$/);
    const usdt = await topUp(u.token, { amount_cents: 1234, currency: "USDT" });
    expect(usdt.body.crypto_amount).toBe("12.340000");
    const list = (await t.req("GET", "/api/v3/billing/top-ups", { token: u.token })).body;
    expect(list.map((x: any) => x.id)).toEqual([usdt.body.id, eth.body.id, b.body.id, a.body.id]);
    expect(peer.requests.every((r) => r.authorised)).toBe(true);
    // another account cannot see it
    expect((await t.req("GET", `/api/v3/billing/top-ups/${a.body.id}`, { token: (await t.user()).token })).status).toBe(404);
  });

  test("minimum 10 USD; one amount field; known currencies only", async () => {
    const u = await t.user();
    const cases: [unknown, string][] = [
      [{ amount_cents: 999, currency: "BTC" }, "minimum top-up is 10 USD"],
      [{ amount_usd: "9.99", currency: "BTC" }, "minimum top-up is 10 USD"],
      [{ amount_usd: "10.001", currency: "BTC" }, "amount_usd must be a USD amount"],
      [{ amount_cents: 1000, amount_usd: 10, currency: "BTC" }, "exactly one of amount_cents or amount_usd"],
      [{ currency: "BTC" }, "exactly one of amount_cents or amount_usd"],
      [{ amount_cents: 1000, currency: "DOGE" }, "currency must be one of BTC, ETH, USDT"],
      [{ amount_cents: 10.5, currency: "BTC" }, "amount_cents must be an integer number of cents"],
    ];
    for (const [body, msg] of cases) {
      const r = await topUp(u.token, body);
      expect(r.status).toBe(400);
      expect(r.body.error).toContain(msg);
    }
  });

  test("a settled invoice credits the balance once, however many deliveries; a past_due account comes back", async () => {
    const u = await t.user({ plan: "pro" });
    await closeDay(t, adminToken, dayAt(0)); // balance 0 → past_due
    expect((await balance(t, u.token)).status).toBe("past_due");
    const tu = (await topUp(u.token, { amount_cents: 1000, currency: "BTC" })).body;
    const seen = peer.pay(tu.invoice_id);
    expect(await peer.deliver(seen)).toEqual([200, 200]);
    expect((await get(u.token, tu.id)).status).toBe("processing");
    expect((await balance(t, u.token)).balance_cents).toBe(0);
    const settled = peer.confirm(tu.invoice_id);
    expect(await peer.deliver(settled, 3)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await balance(t, u.token)).toMatchObject({ balance_cents: 1000, status: "active" });
    const after = await get(u.token, tu.id);
    expect(after.status).toBe("credited");
    expect(typeof after.credited_at).toBe("string");
    const deposits = (await t.req("GET", "/api/v3/billing/transactions?type=deposit", { token: u.token })).body;
    expect(deposits.length).toBe(1);
    expect(deposits[0]).toMatchObject({ amount_cents: 1000, top_up_id: tu.id, balance_after_cents: 1000 });
    // a redelivery much later changes nothing either
    expect(await peer.deliver(settled.at(-1)!)).toEqual([200]);
    expect((await balance(t, u.token)).balance_cents).toBe(1000);
  });

  test("ten concurrent deliveries of one settled-invoice webhook credit once", async () => {
    const u = await t.user();
    const tu = (await topUp(u.token, { amount_cents: 5000, currency: "USDT" })).body;
    peer.pay(tu.invoice_id, { currency: "USDT" });
    const [, settled] = peer.confirm(tu.invoice_id);
    const statuses = await peer.deliver(settled!, 10);
    expect(statuses).toEqual(Array(10).fill(200));
    expect((await balance(t, u.token)).balance_cents).toBe(5000);
    expect((await t.req("GET", "/api/v3/billing/transactions", { token: u.token })).body.length).toBe(1);
  });

  test("a bad or missing signature is refused and credits nothing", async () => {
    const u = await t.user();
    const tu = (await topUp(u.token, { amount_cents: 1000, currency: "BTC" })).body;
    peer.pay(tu.invoice_id);
    peer.confirm(tu.invoice_id);
    const forged = peer.webhook("InvoiceSettled", tu.invoice_id, {}, "not-the-secret");
    expect(await peer.deliver(forged)).toEqual([401]);
    const good = peer.webhook("InvoiceSettled", tu.invoice_id);
    const tampered = good.body.replace(`"isRedelivery":false`, `"isRedelivery":true`);
    expect((await t.req("POST", WEBHOOK, { rawBody: tampered, headers: good.headers })).status).toBe(401);
    const { "btcpay-sig": _drop, ...unsigned } = good.headers;
    const r = await t.req("POST", WEBHOOK, { rawBody: good.body, headers: unsigned });
    expect(r).toMatchObject({ status: 401, body: { error: "invalid webhook signature" } });
    expect((await balance(t, u.token)).balance_cents).toBe(0);
    expect(await peer.deliver(good)).toEqual([200]);
    expect((await balance(t, u.token)).balance_cents).toBe(1000);
  });

  test("a signed event for an invoice that is not settled at the processor credits nothing", async () => {
    const u = await t.user();
    const tu = (await topUp(u.token, { amount_cents: 1000, currency: "BTC" })).body;
    const early = peer.webhook("InvoiceSettled", tu.invoice_id);
    const r = await t.req("POST", WEBHOOK, { rawBody: early.body, headers: early.headers });
    expect(r.body).toEqual({ status: "ok", result: "ignored" });
    expect((await balance(t, u.token)).balance_cents).toBe(0);
    // an invoice that is not ours is acknowledged and ignored
    const other = peer.webhook("InvoiceSettled", "not-ours");
    expect((await t.req("POST", WEBHOOK, { rawBody: other.body, headers: other.headers })).body.result).toBe("ignored");
  });

  test("over- and underpayments wait for a person; an administrator credits what was received", async () => {
    const u = await t.user();
    const over = (await topUp(u.token, { amount_cents: 1000, currency: "BTC" })).body;
    await peer.deliver(peer.pay(over.invoice_id, { amount: "over" }));
    await peer.deliver(peer.confirm(over.invoice_id));
    expect(await get(u.token, over.id)).toMatchObject({ status: "manual_review", review_reason: "overpaid" });

    const under = (await topUp(u.token, { amount_cents: 1000, currency: "ETH" })).body;
    await peer.deliver(peer.pay(under.invoice_id, { currency: "ETH", amount: "under" }));
    await peer.deliver(peer.expire(under.invoice_id));
    expect((await get(u.token, under.id)).status).toBe("manual_review");
    expect((await get(u.token, under.id)).review_reason).toContain("underpaid");
    expect((await balance(t, u.token)).balance_cents).toBe(0);

    const review = (await t.req("GET", "/api/v3/admin/top-ups?status=manual_review", { token: adminToken })).body.filter((x: any) => x.user_id === u.id);
    expect(review.map((x: any) => x.id).sort()).toEqual([over.id, under.id].sort());
    const credit = (id: number, cents: number) => t.req("POST", `/api/v3/admin/top-ups/${id}/credit`, { token: adminToken, body: { amount_cents: cents, reason: "checked on chain" } });
    const c = await credit(over.id, 1100);
    expect(c.status).toBe(200);
    expect(c.body).toMatchObject({ balance_cents: 1100, top_up: { status: "credited" } });
    expect((await credit(over.id, 1100)).status).toBe(409);
    await credit(under.id, 900);
    expect((await balance(t, u.token)).balance_cents).toBe(2000);
    expect((await t.req("POST", `/api/v3/admin/top-ups/${under.id}/credit`, { token: u.token, body: { amount_cents: 1, reason: "me" } })).status).toBe(403);
  });

  test("not settled within the hour: marked expired; a payment after expiry waits for a person", async () => {
    const u = await t.user();
    const tu = (await topUp(u.token, { amount_cents: 1500, currency: "BTC" })).body;
    t.setNow(new Date(Date.now() + 61 * 60_000));
    expect((await get(u.token, tu.id)).status).toBe("expired");
    await peer.deliver(peer.expire(tu.invoice_id));
    expect((await get(u.token, tu.id)).status).toBe("expired");
    await peer.deliver(peer.pay(tu.invoice_id));
    expect(await get(u.token, tu.id)).toMatchObject({ status: "manual_review", review_reason: "paid after the invoice expired" });
    expect((await balance(t, u.token)).balance_cents).toBe(0);
  });

  test("the expiry job marks overdue top-ups of every account", async () => {
    const u = await t.user();
    const tu = (await topUp(u.token, { amount_cents: 1000, currency: "USDT" })).body;
    const early = await t.req("POST", "/api/v3/admin/jobs/billing-expire-top-ups", { token: adminToken, body: { at: new Date(Date.now() + 30 * 60_000).toISOString() } });
    expect(early.status).toBe(200);
    const [row] = (await t.req("GET", "/api/v3/admin/top-ups?status=pending", { token: adminToken })).body.filter((x: any) => x.id === tu.id);
    expect(row.status).toBe("pending");
    const late = await t.req("POST", "/api/v3/admin/jobs/billing-expire-top-ups", { token: adminToken, body: { at: new Date(Date.now() + 2 * 3_600_000).toISOString() } });
    expect(late.body.expired).toBeGreaterThanOrEqual(1);
    expect((await get(u.token, tu.id)).status).toBe("expired");
  });

  test("an invoice marked settled by the store's administrator is credited; a deposit can be refunded out of the balance", async () => {
    const u = await t.user();
    const tu = (await topUp(u.token, { amount_cents: 2000, currency: "BTC" })).body;
    await peer.deliver(peer.markSettled(tu.invoice_id));
    expect((await balance(t, u.token)).balance_cents).toBe(2000);
    const [dep] = (await t.req("GET", "/api/v3/billing/transactions?type=deposit", { token: u.token })).body;
    const refund = (cents?: number) =>
      t.req("POST", `/api/v3/admin/users/${u.id}/refunds`, { token: adminToken, body: { transaction_id: dep.id, reason: "customer asked", ...(cents ? { amount_cents: cents } : {}) } });
    const r = await refund(500);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ type: "refund", amount_cents: -500, balance_cents: 1500, refund_of: dep.id });
    expect((await refund(1501)).status).toBe(409);
    expect((await refund()).body.balance_cents).toBe(0);
  });
});

describe("without a processor configured", () => {
  test("top-ups and the webhook answer 503", async () => {
    const bare = await startTestCore();
    try {
      const u = await bare.user();
      const r = await bare.req("POST", "/api/v3/billing/top-ups", { token: u.token, body: { amount_cents: 1000, currency: "BTC" } });
      expect(r.status).toBe(503);
      expect(r.body.error).toContain("not configured");
      expect((await bare.req("POST", WEBHOOK, { rawBody: "{}", headers: { "content-type": "application/json" } })).status).toBe(503);
    } finally {
      await bare.close();
    }
  });

  test("lazy payment methods are activated to get the address; a processor that is down is a 502", async () => {
    const lazy = await startBtcpayPeer({ lazyPaymentMethods: true });
    const core = await startTestCore(lazy.env);
    try {
      const u = await core.user();
      const r = await core.req("POST", "/api/v3/billing/top-ups", { token: u.token, body: { amount_cents: 1000, currency: "ETH" } });
      expect(r.status).toBe(201);
      expect(r.body.payment_address).toMatch(/^0x/);
      expect(lazy.requests.some((q) => q.method === "POST" && q.path.endsWith("/activate"))).toBe(true);
      await lazy.close();
      const down = await core.req("POST", "/api/v3/billing/top-ups", { token: u.token, body: { amount_cents: 1000, currency: "ETH" } });
      expect(down.status).toBe(502);
      expect(down.body.error).not.toContain(lazy.apiKey);
    } finally {
      await core.close();
    }
  });
});
