import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { asc, eq } from "drizzle-orm";
import { billingTransactions, users } from "@pushstack/schema";
import { startBtcpayPeer, type BtcpayPeer } from "@pushstack/testing";
import { startTestCore, type TestCore } from "../../testing/harness";
import { admin, createApp, addDevices, today } from "./testkit";
import { closeAccountDay } from "./close-day";
import { addDays } from "./money";

let t: TestCore;
let peer: BtcpayPeer;
let adminToken: string;
beforeAll(async () => {
  peer = await startBtcpayPeer({ deliver: async (body, headers) => ({ status: (await t.req("POST", "/api/v3/billing/webhooks/btcpay", { rawBody: body, headers })).status }) });
  t = await startTestCore(peer.env);
  adminToken = (await admin(t)).token;
});
afterAll(async () => {
  await t.close();
  await peer.close();
});

type Op =
  | { kind: "charge" }
  | { kind: "deposit"; cents: number; outcome: "exact" | "over" }
  | { kind: "adjust"; cents: number }
  | { kind: "refund"; pick: number; cents: number | null }
  | { kind: "devices"; n: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.constant<Op>({ kind: "charge" }),
  fc.record({ kind: fc.constant("deposit" as const), cents: fc.integer({ min: 1000, max: 20_000 }), outcome: fc.constantFrom("exact" as const, "over" as const) }),
  fc.record({ kind: fc.constant("adjust" as const), cents: fc.integer({ min: -3000, max: 3000 }).filter((n) => n !== 0) }),
  fc.record({ kind: fc.constant("refund" as const), pick: fc.nat(), cents: fc.option(fc.integer({ min: 1, max: 3000 })) }),
  fc.record({ kind: fc.constant("devices" as const), n: fc.integer({ min: 1, max: 4000 }) }),
);

/**
 * The ledger invariant: after any sequence of charges, deposits, refunds and adjustments (including
 * the ones refused for overdrawing), the balance equals the sum of the transactions, and each
 * transaction's balance_after is the running sum.
 */
test("balance = sum of transactions, after any sequence of operations", async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.constantFrom("pro", "team"), fc.array(op, { minLength: 1, maxLength: 12 }), async (plan, ops) => {
      const u = await t.user({ plan });
      const app = await createApp(t, u.token);
      let day = 0;
      let devices = 0;
      for (const o of ops) {
        if (o.kind === "charge") {
          await closeAccountDay(t.ctx, u.id, addDays(today(), day++));
        } else if (o.kind === "deposit") {
          const tu = (await t.req("POST", "/api/v3/billing/top-ups", { token: u.token, body: { amount_cents: o.cents, currency: "USDT" } })).body;
          await peer.deliver(peer.pay(tu.invoice_id, { currency: "USDT", amount: o.outcome }));
          await peer.deliver(peer.confirm(tu.invoice_id), 2);
        } else if (o.kind === "adjust") {
          const r = await t.req("POST", `/api/v3/admin/users/${u.id}/balance-adjustments`, { token: adminToken, body: { amount_cents: o.cents, reason: "prop" } });
          expect([201, 409]).toContain(r.status);
        } else if (o.kind === "refund") {
          const txs = (await t.req("GET", "/api/v3/billing/transactions", { token: u.token })).body.filter((x: any) => x.type === "charge" || x.type === "deposit");
          if (txs.length === 0) continue;
          const target = txs[o.pick % txs.length];
          const r = await t.req("POST", `/api/v3/admin/users/${u.id}/refunds`, { token: adminToken, body: { transaction_id: target.id, reason: "prop", ...(o.cents ? { amount_cents: o.cents } : {}) } });
          expect([201, 409]).toContain(r.status);
        } else {
          await addDevices(t, app, o.n, `r${run}-${devices}`);
          devices += o.n;
        }
      }
      const [acct] = await t.ctx.db.select().from(users).where(eq(users.id, u.id));
      const rows = await t.ctx.db.select().from(billingTransactions).where(eq(billingTransactions.userId, u.id)).orderBy(asc(billingTransactions.id));
      let running = 0;
      for (const r of rows) {
        running += r.amountCents;
        expect(r.balanceAfterCents).toBe(running);
        expect(Number.isInteger(r.amountCents)).toBe(true);
      }
      expect(acct!.balanceCents).toBe(running);
      expect(acct!.balanceCents).toBeGreaterThanOrEqual(0);
      run++;
    }),
    { numRuns: 12 },
  );
}, 120_000);
