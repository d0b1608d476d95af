import { count, eq } from "drizzle-orm";
import { apps, devices, users } from "@pushstack/schema";
import { notFound } from "@pushstack/http";
import type { CoreContext } from "../../context";
import type { Db } from "../../db";
import { requireInstallCapacity } from "./entitlements";

/** Installs of an account: its devices across all its apps (archived apps included: their devices still exist). */
export async function countInstalls(db: Db, userId: number): Promise<number> {
  const [row] = await db.select({ n: count() }).from(devices).innerJoin(apps, eq(apps.id, devices.appId)).where(eq(apps.userId, userId));
  return Number(row?.n ?? 0);
}

export async function countApps(db: Db, userId: number): Promise<number> {
  const [row] = await db.select({ n: count() }).from(apps).where(eq(apps.userId, userId));
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
  requireInstallCapacity(owner.plan, await countInstalls(db, userId), adding);
}

/**
 * Sending is paused while the subscription is `past_due` (apps, devices and data are kept) and resumes
 * by itself when a credit brings it back to `active`. Free never goes past_due. The edge and the
 * dispatcher see the same status in the app directory entry (`subscription_status`).
 */
export const sendingAllowed = (subscriptionStatus: string): boolean => subscriptionStatus !== "past_due";

/** May this account's pushes go out now? false also for an unknown account. */
export async function canSend(ctx: CoreContext, userId: number, db: Db = ctx.db): Promise<boolean> {
  const [owner] = await db.select({ status: users.subscriptionStatus }).from(users).where(eq(users.id, userId));
  return !!owner && sendingAllowed(owner.status);
}
