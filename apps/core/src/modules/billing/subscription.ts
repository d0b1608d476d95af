import { and, asc, desc, eq, lte } from "drizzle-orm";
import { planChanges, planOf } from "@pushstack/schema";
import { conflict } from "@pushstack/http";
import type { Actor, CoreContext } from "../../context";
import type { Db } from "../../db";
import { withAccount, saveSubscription, setPlan, isPaid, projectedDailyCost, PERIOD_DAYS, type Account } from "./ledger";
import { countInstalls } from "./limits";
import { startOfNextDay, plusDays } from "./money";
import { assertAccountWide } from "./access";

/**
 * Subscription rules (spec "Subscription" states):
 * - upgrade: the new plan (features, limits) at once; its daily rate from the next UTC day, because a
 *   day is charged at the plan in effect when it started (plan_changes history);
 * - downgrade: at the end of the current period, refused now when installs exceed the new plan's cap;
 * - cancel: the plan stays until the period ends, then Free;
 * - Free has no period and costs nothing.
 */

async function recordChange(tx: Db, acct: Account, to: string, effectiveAt: Date, reason: string, now: Date) {
  await tx.insert(planChanges).values({ userId: acct.user.id, fromPlan: acct.user.plan, toPlan: to, effectiveAt, reason, createdAt: now });
  await setPlan(tx, acct, to, now);
}

/** The plan whose rate applies to a day that starts at `instant`. */
export async function planAt(tx: Db, acct: Account, instant: Date): Promise<string> {
  const [last] = await tx
    .select()
    .from(planChanges)
    .where(and(eq(planChanges.userId, acct.user.id), lte(planChanges.effectiveAt, instant)))
    .orderBy(desc(planChanges.effectiveAt), desc(planChanges.id))
    .limit(1);
  if (last) return last.toPlan;
  // before the first recorded change the account was on that change's "from" plan
  const [first] = await tx.select().from(planChanges).where(eq(planChanges.userId, acct.user.id)).orderBy(asc(planChanges.effectiveAt), asc(planChanges.id)).limit(1);
  return first ? first.fromPlan : acct.user.plan;
}

/**
 * Applies what the period end brings, up to `upTo`: the pending plan (downgrade, cancellation), or a
 * new period of the same plan. Called by the daily close (with the start of the day it closes) and
 * on reads (with now), so it does not matter which comes first.
 */
export async function applyDueTransitions(tx: Db, acct: Account, upTo: Date, now: Date): Promise<void> {
  for (let guard = 0; guard < 1000 && acct.sub.periodEnd && acct.sub.periodEnd <= upTo; guard++) {
    const end = acct.sub.periodEnd;
    const pending = acct.sub.pendingPlan;
    if (pending && pending !== acct.user.plan) {
      await recordChange(tx, acct, pending, end, pending === "free" ? "cancel" : "downgrade", now);
      await saveSubscription(tx, acct, { pendingPlan: null, periodStart: isPaid(pending) ? end : null, periodEnd: isPaid(pending) ? plusDays(end, PERIOD_DAYS) : null }, now);
    } else if (isPaid(acct.user.plan)) {
      await saveSubscription(tx, acct, { pendingPlan: null, periodStart: end, periodEnd: plusDays(end, PERIOD_DAYS) }, now);
    } else {
      await saveSubscription(tx, acct, { pendingPlan: null, periodStart: null, periodEnd: null }, now);
    }
  }
}

export async function subscriptionView(tx: Db, acct: Account) {
  const { daily } = await projectedDailyCost(tx, acct);
  return {
    plan: acct.user.plan,
    status: acct.user.subscriptionStatus,
    pending_plan: acct.sub.pendingPlan,
    current_period_start: acct.sub.periodStart ? acct.sub.periodStart.toISOString() : null,
    current_period_end: acct.sub.periodEnd ? acct.sub.periodEnd.toISOString() : null,
    cancel_at_period_end: acct.sub.pendingPlan === "free",
    daily_cost_cents: daily,
  };
}

export async function getSubscription(ctx: CoreContext, actor: Actor) {
  assertAccountWide(actor);
  return withAccount(ctx, actor.userId, async (tx, acct) => {
    await applyDueTransitions(tx, acct, ctx.now(), ctx.now());
    return subscriptionView(tx, acct);
  });
}

export async function changePlan(ctx: CoreContext, actor: Actor, target: string) {
  assertAccountWide(actor);
  return withAccount(ctx, actor.userId, async (tx, acct) => {
    const now = ctx.now();
    await applyDueTransitions(tx, acct, now, now);
    const current = planOf(acct.user.plan);
    const next = planOf(target);
    if (next.id === current.id) {
      // choosing the current plan again withdraws a pending downgrade or cancellation
      if (acct.sub.pendingPlan) await saveSubscription(tx, acct, { pendingPlan: null }, now);
    } else if (next.rank > current.rank) {
      await recordChange(tx, acct, next.id, now, "upgrade", now);
      // leaving Free starts a period on the first day charged at the new rate; paid → paid keeps it
      const start = acct.sub.periodEnd ? acct.sub.periodStart : startOfNextDay(now);
      await saveSubscription(tx, acct, { pendingPlan: null, periodStart: start, periodEnd: acct.sub.periodEnd ?? plusDays(start!, PERIOD_DAYS) }, now);
    } else {
      const installs = await countInstalls(tx, acct.user.id);
      if (next.maxInstalls !== null && installs > next.maxInstalls) {
        throw conflict(`the ${next.name} plan allows ${next.maxInstalls} installs and the account has ${installs}; remove devices before downgrading`);
      }
      await scheduleAtPeriodEnd(tx, acct, next.id, now);
    }
    return subscriptionView(tx, acct);
  });
}

/** Cancel: the plan stays until the period ends, then Free (no install check: Free's cap then only stops new registrations). */
export async function cancelSubscription(ctx: CoreContext, actor: Actor) {
  assertAccountWide(actor);
  return withAccount(ctx, actor.userId, async (tx, acct) => {
    const now = ctx.now();
    await applyDueTransitions(tx, acct, now, now);
    if (acct.user.plan !== "free") await scheduleAtPeriodEnd(tx, acct, "free", now);
    return subscriptionView(tx, acct);
  });
}

async function scheduleAtPeriodEnd(tx: Db, acct: Account, plan: string, now: Date) {
  if (acct.sub.periodEnd) {
    await saveSubscription(tx, acct, { pendingPlan: plan }, now);
    return;
  }
  // a plan without a period (Enterprise, or set by an administrator): the change takes effect tomorrow
  const end = startOfNextDay(now);
  await saveSubscription(tx, acct, { pendingPlan: plan, periodStart: null, periodEnd: end }, now);
}

/** Administrators set any plan (Enterprise included) at once; the rate applies from the next day. */
export async function adminSetPlan(ctx: CoreContext, userId: number, plan: string) {
  return withAccount(ctx, userId, async (tx, acct) => {
    const now = ctx.now();
    await applyDueTransitions(tx, acct, now, now);
    if (plan !== acct.user.plan) {
      await recordChange(tx, acct, plan, now, "admin", now);
      const start = isPaid(plan) ? startOfNextDay(now) : null;
      await saveSubscription(tx, acct, { pendingPlan: null, periodStart: start, periodEnd: start ? plusDays(start, PERIOD_DAYS) : null }, now);
    } else if (acct.sub.pendingPlan) {
      await saveSubscription(tx, acct, { pendingPlan: null }, now);
    }
    return subscriptionView(tx, acct);
  });
}
