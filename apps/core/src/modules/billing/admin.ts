import { and, desc, eq, sql } from "drizzle-orm";
import { users, billingDays, billingTransactions, topUps } from "@pushstack/schema";
import { badRequest, conflict, notFound } from "@pushstack/http";
import type { Actor, CoreContext } from "../../context";
import { withAccount, postEntry, settleAccount } from "./ledger";
import { applyDueTransitions, subscriptionView } from "./subscription";
import { balanceFor, usageFor, transactionsFor, transactionView, lowBalanceSince } from "./service";
import { topUpView } from "./topups";
import { utcDay } from "./money";

/** Contract: an `adjustment` transaction of any sign; the balance never goes below zero through one. */
export async function adjustBalance(ctx: CoreContext, admin: Actor, userId: number, amountCents: number, reason: string) {
  if (amountCents === 0) throw badRequest("amount_cents must be a non-zero integer (may be negative)");
  return withAccount(ctx, userId, async (tx, acct) => {
    if (acct.user.balanceCents + amountCents < 0) {
      throw conflict(`the adjustment would make the balance negative (balance is ${acct.user.balanceCents} cents)`);
    }
    const now = ctx.now();
    const entry = await postEntry(tx, acct, { type: "adjustment", amountCents, day: utcDay(now), description: reason.trim(), createdBy: admin.userId, details: { admin_id: admin.userId } }, now);
    await settleAccount(ctx, tx, acct, now);
    return { ...transactionView(entry!), balance_cents: acct.user.balanceCents };
  });
}

/**
 * A refund returns (part of) an earlier charge or deposit:
 * - of a charge: the amount goes back to the balance (positive);
 * - of a deposit: the money goes back to the customer, out of the balance (negative; not more than the balance).
 * The refunds of one transaction never add up to more than it.
 */
export async function refund(ctx: CoreContext, admin: Actor, userId: number, input: { transaction_id: number; amount_cents?: number; reason: string }) {
  return withAccount(ctx, userId, async (tx, acct) => {
    const [orig] = await tx.select().from(billingTransactions).where(and(eq(billingTransactions.id, input.transaction_id), eq(billingTransactions.userId, userId)));
    if (!orig) throw notFound("transaction");
    if (orig.type !== "charge" && orig.type !== "deposit") throw badRequest("only a charge or a deposit can be refunded");
    const [{ done }] = (await tx
      .select({ done: sql<string>`coalesce(sum(abs(${billingTransactions.amountCents})), 0)` })
      .from(billingTransactions)
      .where(and(eq(billingTransactions.refundOf, orig.id), eq(billingTransactions.type, "refund")))) as [{ done: string }];
    const remaining = Math.abs(orig.amountCents) - Number(done);
    if (remaining <= 0) throw conflict(`transaction ${orig.id} is already fully refunded`);
    const amount = input.amount_cents ?? remaining;
    if (amount > remaining) throw conflict(`at most ${remaining} cents of transaction ${orig.id} can still be refunded`);
    const signed = orig.type === "charge" ? amount : -amount;
    if (acct.user.balanceCents + signed < 0) throw conflict(`the refund would make the balance negative (balance is ${acct.user.balanceCents} cents)`);
    const now = ctx.now();
    const entry = await postEntry(
      tx,
      acct,
      { type: "refund", amountCents: signed, day: utcDay(now), description: input.reason.trim(), refundOf: orig.id, createdBy: admin.userId, details: { admin_id: admin.userId, refunded_type: orig.type } },
      now,
    );
    await settleAccount(ctx, tx, acct, now);
    return { ...transactionView(entry!), balance_cents: acct.user.balanceCents };
  });
}

/** Everything support needs about one account's billing, and the ledger check (balance = sum of transactions). */
export async function adminBillingView(ctx: CoreContext, userId: number) {
  const [u] = await ctx.db.select().from(users).where(eq(users.id, userId));
  if (!u) throw notFound("user");
  const subscription = await withAccount(ctx, userId, async (tx, acct) => {
    await applyDueTransitions(tx, acct, ctx.now(), ctx.now());
    return subscriptionView(tx, acct);
  });
  const [{ sum }] = (await ctx.db
    .select({ sum: sql<string>`coalesce(sum(${billingTransactions.amountCents}), 0)` })
    .from(billingTransactions)
    .where(eq(billingTransactions.userId, userId))) as [{ sum: string }];
  const balance = await balanceFor(ctx.db, userId);
  const days = await ctx.db.select().from(billingDays).where(eq(billingDays.userId, userId)).orderBy(desc(billingDays.day)).limit(31);
  const tops = await ctx.db.select().from(topUps).where(eq(topUps.userId, userId)).orderBy(desc(topUps.id)).limit(50);
  const since = await lowBalanceSince(ctx.db, userId);
  return {
    user: { id: u.id, email: u.email, created_at: u.createdAt.toISOString() },
    subscription,
    balance,
    usage: await usageFor(ctx, ctx.db, userId),
    ledger: { sum_cents: Number(sum), balance_cents: balance.balance_cents, consistent: Number(sum) === balance.balance_cents },
    low_balance_since: since ? since.toISOString() : null,
    days: days.map((d) => ({
      day: d.day,
      plan: d.plan,
      installs: d.installs,
      apps: d.apps,
      amount_due_cents: d.amountDueCents,
      charged_cents: d.chargedCents,
      balance_after_cents: d.balanceAfterCents,
      status: d.status,
    })),
    transactions: await transactionsFor(ctx.db, userId, { limit: 100 }),
    top_ups: tops.map((t) => ({ ...topUpView(t), paid_amount: t.paidAmount })),
  };
}
