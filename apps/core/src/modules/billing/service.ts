import { and, desc, eq, gte, lt, lte } from "drizzle-orm";
import { users, billingDays, billingTransactions, billingSubscriptions, planOf } from "@pushstack/schema";
import { badRequest, notFound } from "@pushstack/http";
import type { Actor, CoreContext } from "../../context";
import type { Db } from "../../db";
import { countApps, countInstalls } from "./limits";
import { dailyChargeCents, daysRemaining, parseDay, utcDay, addDays } from "./money";
import { assertAccountWide } from "./access";
import type { TransactionRow } from "./ledger";

/**
 * Read side of billing: balance, usage, transactions. The write side lives in ledger.ts (one
 * transaction per change), close-day.ts, subscription.ts, topups.ts and admin.ts.
 */

export { assertInstallCapacity, canSend, sendingAllowed, countInstalls } from "./limits";
export { requireFeature, requireAppCapacity, requireInstallCapacity, hasFeature } from "./entitlements";

async function loadUser(db: Db, userId: number) {
  const [u] = await db.select().from(users).where(eq(users.id, userId));
  if (!u) throw notFound("user");
  return u;
}

export async function balanceFor(db: Db, userId: number) {
  const u = await loadUser(db, userId);
  const daily = dailyChargeCents(planOf(u.plan), await countInstalls(db, userId));
  return {
    balance_cents: u.balanceCents,
    currency: "USD" as const,
    projected_daily_cost: daily,
    days_remaining: daysRemaining(u.balanceCents, daily),
    plan: u.plan,
    status: u.subscriptionStatus,
    low_balance: daily > 0 && u.balanceCents < 3 * daily,
  };
}

export async function getBalance(ctx: CoreContext, actor: Actor) {
  assertAccountWide(actor);
  return balanceFor(ctx.db, actor.userId);
}

const pct = (n: number, limit: number | null) => (limit ? Math.round((n / limit) * 10000) / 100 : 0);

/**
 * Usage: the latest daily snapshot when it is today's or yesterday's (`source: "snapshot"`, what the
 * last charge was computed from); otherwise counted now (`source: "live"`). Limits are the plan's;
 * null = unlimited (percentages are then 0).
 */
export async function usageFor(ctx: CoreContext, db: Db, userId: number) {
  const u = await loadUser(db, userId);
  const plan = planOf(u.plan);
  const today = utcDay(ctx.now());
  const [snap] = await db
    .select()
    .from(billingDays)
    .where(and(eq(billingDays.userId, userId), gte(billingDays.day, addDays(today, -1)), lte(billingDays.day, today)))
    .orderBy(desc(billingDays.day))
    .limit(1);
  const installs = snap ? snap.installs : await countInstalls(db, userId);
  const appCount = snap ? snap.apps : await countApps(db, userId);
  return {
    active_installs: installs,
    total_apps: appCount,
    install_limit: plan.maxInstalls,
    apps_limit: plan.maxApps,
    install_percentage: pct(installs, plan.maxInstalls),
    apps_percentage: pct(appCount, plan.maxApps),
    snapshot_date: snap ? snap.day : today,
    source: snap ? "snapshot" : "live",
  };
}

export async function getUsage(ctx: CoreContext, actor: Actor) {
  assertAccountWide(actor);
  return usageFor(ctx, ctx.db, actor.userId);
}

export function transactionView(t: TransactionRow) {
  return {
    id: t.id,
    type: t.type,
    amount_cents: t.amountCents,
    balance_after_cents: t.balanceAfterCents,
    currency: "USD" as const,
    date: t.day,
    description: t.description,
    top_up_id: t.topUpId,
    refund_of: t.refundOf,
    details: t.details,
    created_at: t.createdAt.toISOString(),
  };
}

export interface TransactionFilter {
  type?: string;
  date_from?: string;
  date_to?: string;
  limit?: number | string;
  before_id?: number | string;
}

/** Newest first. Dates are UTC days, inclusive, matched against the transaction's day (a charge: the day charged for). */
export async function transactionsFor(db: Db, userId: number, q: TransactionFilter) {
  const from = q.date_from !== undefined ? parseDay(q.date_from, "date_from") : undefined;
  const to = q.date_to !== undefined ? parseDay(q.date_to, "date_to") : undefined;
  if (from && to && from > to) throw badRequest("date_from must not be after date_to");
  const limit = q.limit === undefined ? 100 : Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw badRequest("limit must be an integer from 1 to 1000");
  const beforeId = q.before_id === undefined ? undefined : Number(q.before_id);
  if (beforeId !== undefined && (!Number.isSafeInteger(beforeId) || beforeId < 1)) throw badRequest("before_id must be a positive integer");
  const rows = await db
    .select()
    .from(billingTransactions)
    .where(
      and(
        eq(billingTransactions.userId, userId),
        q.type ? eq(billingTransactions.type, q.type) : undefined,
        from ? gte(billingTransactions.day, from) : undefined,
        to ? lte(billingTransactions.day, to) : undefined,
        beforeId ? lt(billingTransactions.id, beforeId) : undefined,
      ),
    )
    .orderBy(desc(billingTransactions.id))
    .limit(limit);
  return rows.map(transactionView);
}

export async function listTransactions(ctx: CoreContext, actor: Actor, q: TransactionFilter) {
  assertAccountWide(actor);
  return transactionsFor(ctx.db, actor.userId, q);
}

export async function lowBalanceSince(db: Db, userId: number): Promise<Date | null> {
  const [s] = await db.select({ since: billingSubscriptions.lowBalanceSince }).from(billingSubscriptions).where(eq(billingSubscriptions.userId, userId));
  return s?.since ?? null;
}
