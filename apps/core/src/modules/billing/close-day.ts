import { and, eq, gte, lt, lte, min } from "drizzle-orm";
import { users, billingDays, planOf } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import { withAccount, postEntry, settleAccount } from "./ledger";
import { applyDueTransitions, planAt } from "./subscription";
import { countApps, countInstalls } from "./limits";
import { dailyChargeCents, utcDay, dayStart, dayEnd, addDays } from "./money";
import { flushMail } from "./mail";

/** How far back a run looks for days it missed (core down, cron skipped). */
export const CATCH_UP_DAYS = 31;

export interface CloseDaySummary {
  day: string;
  accounts: number;
  /** Account-days closed by this run (the day itself and caught-up days). */
  closed: number;
  /** Account-days another run (or replica) had already closed. */
  already_closed: number;
  charged_cents: number;
  caught_up_days: number;
  past_due: number;
  alerts_sent: number;
}

/**
 * `billing-close-day` for the UTC day that contains `at`: for every account that existed that day,
 * snapshot installs and apps, charge the day, and settle the status. Days the job missed (since the
 * first day billing ever closed, at most CATCH_UP_DAYS back, never before the account existed) are
 * closed first, oldest first. Exactly once per account and day: each account-day runs in a transaction
 * that locks the account row and finds or writes the (user, day) snapshot row, so two replicas or a
 * re-run find the day closed and do nothing.
 */
export async function closeDay(ctx: CoreContext, at: Date): Promise<CloseDaySummary> {
  const day = utcDay(at);
  const summary: CloseDaySummary = { day, accounts: 0, closed: 0, already_closed: 0, charged_cents: 0, caught_up_days: 0, past_due: 0, alerts_sent: 0 };
  const [{ first } = { first: null }] = await ctx.db.select({ first: min(billingDays.day) }).from(billingDays);
  // before billing ever closed a day there is nothing to catch up on (first deployment)
  const floor = [first ?? day, addDays(day, -CATCH_UP_DAYS)].sort().at(-1)!;
  const accounts = await ctx.db.select({ id: users.id, createdAt: users.createdAt }).from(users).where(lt(users.createdAt, dayEnd(day))).orderBy(users.id);
  const closedRows = await ctx.db.select({ userId: billingDays.userId, day: billingDays.day }).from(billingDays).where(and(gte(billingDays.day, floor), lte(billingDays.day, day)));
  const closed = new Set(closedRows.map((r) => `${r.userId}:${r.day}`));
  summary.accounts = accounts.length;
  for (const a of accounts) {
    const from = [floor, utcDay(a.createdAt)].sort().at(-1)!;
    const todo: string[] = [];
    for (let d = from; d < day; d = addDays(d, 1)) if (!closed.has(`${a.id}:${d}`)) todo.push(d);
    todo.push(day); // the requested day is always attempted (its row decides)
    for (const d of todo) {
      const r = await closeAccountDay(ctx, a.id, d);
      if (!r) {
        summary.already_closed++;
        continue;
      }
      summary.closed++;
      if (d !== day) summary.caught_up_days++;
      summary.charged_cents += r.charged;
      if (d === day && r.status === "past_due") summary.past_due++;
    }
  }
  summary.alerts_sent = (await flushMail(ctx)).sent;
  return summary;
}

/** One account, one day; null when that day was already closed. */
export async function closeAccountDay(ctx: CoreContext, userId: number, day: string) {
  return withAccount(ctx, userId, async (tx, acct) => {
    const [done] = await tx.select({ day: billingDays.day }).from(billingDays).where(and(eq(billingDays.userId, userId), eq(billingDays.day, day)));
    if (done) return null;
    const now = ctx.now();
    await applyDueTransitions(tx, acct, dayStart(day), now);
    const plan = planOf(await planAt(tx, acct, dayStart(day)));
    const installs = await countInstalls(tx, userId);
    const apps = await countApps(tx, userId);
    const due = dailyChargeCents(plan, installs);
    // a day that starts past_due had sending paused: it is not charged (the data is kept for free)
    const charged = acct.user.subscriptionStatus === "past_due" ? 0 : Math.min(due, Math.max(0, acct.user.balanceCents));
    if (charged > 0) {
      await postEntry(
        tx,
        acct,
        {
          type: "charge",
          amountCents: -charged,
          day,
          description: `${plan.name} plan, ${day}: ${installs} installs`,
          idemKey: `charge:${userId}:${day}`,
          details: { plan: plan.id, installs, amount_due_cents: due, base_cents: plan.monthlyPriceCents, overage_per_1000_cents: plan.overagePer1000Cents },
        },
        now,
      );
    }
    await settleAccount(ctx, tx, acct, now);
    await tx.insert(billingDays).values({
      userId,
      day,
      plan: plan.id,
      installs,
      apps,
      amountDueCents: due,
      chargedCents: charged,
      balanceAfterCents: acct.user.balanceCents,
      status: acct.user.subscriptionStatus,
      createdAt: now,
    });
    return { charged, due, status: acct.user.subscriptionStatus };
  }, { mail: "defer" }); // the run delivers once, at its end
}
