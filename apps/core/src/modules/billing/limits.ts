import { count, eq } from "drizzle-orm";
import { apps, devices, users, planOf, lowestPlanForInstalls } from "@pushstack/schema";
import { planRequired, notFound } from "@pushstack/http";
import type { CoreContext } from "../../context";
import type { Db } from "../../db";

/** Installs of an account: its devices across all its apps. */
export async function countInstalls(db: Db, userId: number): Promise<number> {
  const [row] = await db.select({ n: count() }).from(devices).innerJoin(apps, eq(apps.id, devices.appId)).where(eq(apps.userId, userId));
  return Number(row?.n ?? 0);
}

/**
 * The install cap (Free 5,000, Pro 50,000): a new registration past it is refused with 403 naming the
 * plan that allows more; existing devices keep working. Call it before creating a device, in the same
 * transaction (pass `tx` as db) when the count must not race.
 */
export async function assertInstallCapacity(ctx: CoreContext, userId: number, adding = 1, db: Db = ctx.db): Promise<void> {
  const [owner] = await db.select({ plan: users.plan }).from(users).where(eq(users.id, userId));
  if (!owner) throw notFound("account");
  const plan = planOf(owner.plan);
  if (plan.maxInstalls === null) return;
  const installs = await countInstalls(db, userId);
  if (installs + adding > plan.maxInstalls) {
    const next = lowestPlanForInstalls(installs + adding);
    throw planRequired(`the ${plan.name} plan allows ${plan.maxInstalls} installs; upgrade to the ${next.name} plan to register more devices`);
  }
}
