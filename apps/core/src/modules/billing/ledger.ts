import { eq } from "drizzle-orm";
import { users, billingSubscriptions, billingTransactions, planOf } from "@pushstack/schema";
import { notFound } from "@pushstack/http";
import type { CoreContext } from "../../context";
import type { Db } from "../../db";
import { publishDirectory } from "../directory/service";
import { countInstalls } from "./limits";
import { dailyChargeCents, centsToUsd, plusDays, dayStart, utcDay } from "./money";
import { enqueueMail, flushMail } from "./mail";

/**
 * Every change to an account's money or subscription goes through `withAccount`: one transaction that
 * holds the account row lock (`SELECT ... FOR UPDATE` on users), so the balance, the ledger and the
 * status move together and concurrent writers (replicas, webhook deliveries, admin calls) take turns.
 * Lock order everywhere: the user row first, then a top-up row.
 */

export type UserRow = typeof users.$inferSelect;
export type SubscriptionRow = typeof billingSubscriptions.$inferSelect;
export type TransactionRow = typeof billingTransactions.$inferSelect;

export interface Account {
  user: UserRow;
  sub: SubscriptionRow;
  /** Set by the work to ask for delivery of queued e-mail after commit. */
  mailQueued: boolean;
}

/** A paid plan runs in 30-day periods; the first starts with the current UTC day. */
export const PERIOD_DAYS = 30;

export const isPaid = (plan: string) => planOf(plan).monthlyPriceCents > 0 || planOf(plan).overagePer1000Cents > 0;

export async function withAccount<T>(
  ctx: CoreContext,
  userId: number,
  work: (tx: Db, acct: Account) => Promise<T>,
  /** Queued e-mail is delivered after commit: in the background (default), awaited, or left to the caller. */
  opts: { mail?: "background" | "await" | "defer" } = {},
): Promise<T> {
  let before: { plan: string; status: string } | null = null;
  let after: Account | null = null;
  const result = await ctx.db.transaction(async (tx) => {
    const [user] = await tx.select().from(users).where(eq(users.id, userId)).for("update");
    if (!user) throw notFound("user");
    before = { plan: user.plan, status: user.subscriptionStatus };
    const acct: Account = { user, sub: await loadSubscription(tx, user, ctx.now()), mailQueued: false };
    const out = await work(tx as unknown as Db, acct);
    after = acct;
    return out;
  });
  await afterCommit(ctx, userId, before!, after!, opts.mail ?? "background");
  return result;
}

async function afterCommit(ctx: CoreContext, userId: number, before: { plan: string; status: string }, acct: Account, mail: "background" | "await" | "defer") {
  if (before.plan !== acct.user.plan || before.status !== acct.user.subscriptionStatus) {
    // the edge and the dispatcher learn plan and status from the app directory
    await publishDirectory(ctx, { userId }).catch((err) => ctx.log.error("directory publish failed", { user_id: userId, err }));
  }
  if (acct.mailQueued && mail !== "defer") {
    const p = flushMail(ctx).catch((err) => ctx.log.error("billing mail flush failed", { err }));
    if (mail === "await") await p;
  }
}

/** The subscription row, created on first use (period from today for a paid plan). The user row is locked. */
async function loadSubscription(tx: Db, user: UserRow, now: Date): Promise<SubscriptionRow> {
  const [row] = await tx.select().from(billingSubscriptions).where(eq(billingSubscriptions.userId, user.id));
  if (row) return row;
  const start = isPaid(user.plan) ? dayStart(utcDay(now)) : null;
  const [created] = await tx
    .insert(billingSubscriptions)
    .values({ userId: user.id, periodStart: start, periodEnd: start ? plusDays(start, PERIOD_DAYS) : null, updatedAt: now })
    .onConflictDoNothing()
    .returning();
  if (created) return created;
  const [again] = await tx.select().from(billingSubscriptions).where(eq(billingSubscriptions.userId, user.id));
  return again!;
}

export async function saveSubscription(tx: Db, acct: Account, patch: Partial<Omit<SubscriptionRow, "userId">>, now: Date) {
  Object.assign(acct.sub, patch, { updatedAt: now });
  await tx.update(billingSubscriptions).set({ ...patch, updatedAt: now }).where(eq(billingSubscriptions.userId, acct.user.id));
}

export interface Entry {
  type: "charge" | "deposit" | "refund" | "adjustment";
  /** Signed effect on the balance. */
  amountCents: number;
  day: string;
  description: string;
  idemKey?: string;
  topUpId?: number;
  refundOf?: number;
  createdBy?: number;
  details?: Record<string, unknown>;
}

/**
 * Writes one ledger row and moves the balance by the same amount. With an `idemKey` already used,
 * nothing happens and null is returned: automatic entries (daily charge, top-up credit) are once-only.
 */
export async function postEntry(tx: Db, acct: Account, e: Entry, now: Date): Promise<TransactionRow | null> {
  if (!Number.isSafeInteger(e.amountCents) || e.amountCents === 0) throw new Error(`ledger amount must be a non-zero integer, got ${e.amountCents}`);
  const balanceAfter = acct.user.balanceCents + e.amountCents;
  const rows = await tx
    .insert(billingTransactions)
    .values({
      userId: acct.user.id,
      type: e.type,
      amountCents: e.amountCents,
      balanceAfterCents: balanceAfter,
      day: e.day,
      description: e.description,
      idemKey: e.idemKey ?? null,
      topUpId: e.topUpId ?? null,
      refundOf: e.refundOf ?? null,
      createdBy: e.createdBy ?? null,
      details: e.details ?? {},
      createdAt: now,
    })
    .onConflictDoNothing()
    .returning();
  if (rows.length === 0) return null;
  await tx.update(users).set({ balanceCents: balanceAfter, updatedAt: now }).where(eq(users.id, acct.user.id));
  acct.user.balanceCents = balanceAfter;
  return rows[0]!;
}

export async function setPlan(tx: Db, acct: Account, plan: string, now: Date) {
  acct.user.plan = plan;
  await tx.update(users).set({ plan, updatedAt: now }).where(eq(users.id, acct.user.id));
}

/** What the account pays per day from now: current plan, current installs. */
export async function projectedDailyCost(tx: Db, acct: Account): Promise<{ daily: number; installs: number }> {
  const installs = await countInstalls(tx, acct.user.id);
  return { daily: dailyChargeCents(planOf(acct.user.plan), installs), installs };
}

/**
 * The status rule, applied after every ledger entry and every closed day:
 * - `past_due` when the balance cannot cover the next day's charge (sending pauses, data is kept);
 * - `active` otherwise — so a credit that covers a day brings the account back, and sending resumes.
 * A plan that charges nothing per day (Free) is always active.
 * Low-balance alert: when the balance is below 3 days of projected cost, once per episode; the episode
 * ends when the balance is back at 3 days or more.
 */
export async function settleAccount(ctx: CoreContext, tx: Db, acct: Account, now: Date): Promise<void> {
  const { daily } = await projectedDailyCost(tx, acct);
  const balance = acct.user.balanceCents;
  const status = daily > 0 && balance < daily ? "past_due" : "active";
  if (status !== acct.user.subscriptionStatus) {
    acct.user.subscriptionStatus = status;
    await tx.update(users).set({ subscriptionStatus: status, updatedAt: now }).where(eq(users.id, acct.user.id));
    ctx.log.info("subscription status changed", { user_id: acct.user.id, status, balance_cents: balance, daily_cents: daily });
  }
  const low = daily > 0 && balance < 3 * daily;
  if (low && !acct.sub.lowBalanceSince) {
    await saveSubscription(tx, acct, { lowBalanceSince: now }, now);
    await enqueueMail(tx, { userId: acct.user.id, to: acct.user.email, now, ...lowBalanceMail(ctx, balance, daily, status) });
    acct.mailQueued = true;
  } else if (!low && acct.sub.lowBalanceSince) {
    await saveSubscription(tx, acct, { lowBalanceSince: null }, now);
  }
}

function lowBalanceMail(ctx: CoreContext, balance: number, daily: number, status: string) {
  const days = Math.max(0, Math.floor(balance / daily));
  const where = ctx.config.publicUrl ? ` at ${ctx.config.publicUrl}/billing` : "";
  const lines = [
    `Your PushStack balance is $${centsToUsd(balance)}: about ${days} day${days === 1 ? "" : "s"} of sending at your current usage ($${centsToUsd(daily)} per day).`,
    status === "past_due"
      ? "Sending is paused until the balance covers a day. Your apps, devices and data are kept."
      : "When the balance cannot cover a day, sending pauses until you top up. Your apps, devices and data are kept.",
    `Top up by cryptocurrency (BTC, ETH or USDT)${where}; sending resumes by itself once the top-up is credited.`,
  ];
  return { kind: "low_balance", subject: `PushStack: low balance, about ${days} day${days === 1 ? "" : "s"} left`, body: lines.join("\n\n") + "\n" };
}
