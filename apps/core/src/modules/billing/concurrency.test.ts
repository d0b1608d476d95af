import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { billingDays, billingTransactions } from "@pushstack/schema";
import { createServer } from "@pushstack/http";
import { silentLogger } from "@pushstack/config";
import { startBtcpayPeer, type BtcpayPeer } from "@pushstack/testing";
import { startTestCore, type TestCore } from "../../testing/harness";
import { openPostgres, type Database } from "../../db";
import { createCore } from "../../app";
import type { CoreContext } from "../../context";
import { admin, adjust, balance, dayAt, today } from "./testkit";
import { closeDay } from "./close-day";

/**
 * Two core replicas on one database. On PostgreSQL (DATABASE_URL set) the second replica has its own
 * connection pool, so the runs below are truly concurrent transactions; on PGlite both share the
 * embedded database (which serialises them), and the same assertions hold.
 */
let t: TestCore;
let peer: BtcpayPeer;
let adminToken: string;
let second: Database | null = null;
let replica2: CoreContext;
let handle2: (req: Request) => Promise<Response>;

beforeAll(async () => {
  peer = await startBtcpayPeer();
  t = await startTestCore(peer.env);
  adminToken = (await admin(t)).token;
  replica2 = { ...t.ctx, now: () => new Date() };
  if (process.env.DATABASE_URL) {
    const [row] = (await t.ctx.db.execute(sql`select current_database() as name`)) as unknown as { name: string }[];
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = "/" + row!.name;
    second = await openPostgres(url.toString(), { max: 10 });
    replica2 = { ...replica2, db: second.db };
  }
  const app2 = createServer({ log: silentLogger, ready: async () => null }).use(createCore(replica2).routes);
  handle2 = (req) => app2.handle(req);
});
afterAll(async () => {
  await second?.close();
  await t.close();
  await peer.close();
});

describe("exactly once under concurrency", () => {
  test("two concurrent billing-close-day runs (two replicas) charge each account once", async () => {
    const accounts = [];
    for (let i = 0; i < 12; i++) {
      const u = await t.user({ plan: i % 2 ? "pro" : "team" });
      await adjust(t, adminToken, u.id, 10_000);
      accounts.push(u);
    }
    const at = dayAt(0, "23:59:00");
    const [a, b] = await Promise.all([closeDay(t.ctx, at), closeDay(replica2, at)]);
    // every account-day closed by exactly one of the runs
    expect(a.closed + b.closed).toBe(a.accounts);
    expect(a.already_closed + b.already_closed).toBe(a.accounts);
    for (const [i, u] of accounts.entries()) {
      expect((await balance(t, u.token)).balance_cents).toBe(10_000 - (i % 2 ? 163 : 496));
      const charges = await t.ctx.db.select().from(billingTransactions).where(eq(billingTransactions.userId, u.id));
      expect(charges.filter((c) => c.type === "charge").length).toBe(1);
      expect((await t.ctx.db.select().from(billingDays).where(eq(billingDays.userId, u.id))).map((d) => d.day)).toEqual([today()]);
    }
    // and a third run for the same day, through the admin endpoint, does nothing
    const again = await t.req("POST", "/api/v3/admin/jobs/billing-close-day", { token: adminToken, body: { at: at.toISOString() } });
    expect(again.body).toMatchObject({ closed: 0, charged_cents: 0 });
  });

  test("ten concurrent deliveries of one settled-invoice webhook, across two replicas, credit once", async () => {
    const u = await t.user();
    const tu = (await t.req("POST", "/api/v3/billing/top-ups", { token: u.token, body: { amount_cents: 4321, currency: "BTC" } })).body;
    peer.pay(tu.invoice_id);
    const settled = peer.confirm(tu.invoice_id).find((h) => h.type === "InvoiceSettled")!;
    const results = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const req = new Request("http://local/api/v3/billing/webhooks/btcpay", { method: "POST", body: settled.body, headers: settled.headers });
        const res = i % 2 ? await handle2(req) : await t.core.routes.handle(req);
        return { status: res.status, body: (await res.json()) as { result: string } };
      }),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(results.filter((r) => r.body.result === "credited").length).toBe(1);
    expect(results.filter((r) => r.body.result === "duplicate").length).toBe(9);
    expect((await balance(t, u.token)).balance_cents).toBe(4321);
    const rows = await t.ctx.db.select().from(billingTransactions).where(eq(billingTransactions.userId, u.id));
    expect(rows.map((r) => [r.type, r.amountCents])).toEqual([["deposit", 4321]]);
  });
});
