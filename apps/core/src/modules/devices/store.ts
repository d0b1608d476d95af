import { and, eq, sql } from "drizzle-orm";
import { devices, users, planOf } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import type { Db } from "../../db";
import { assertInstallCapacity } from "../billing/limits";

export type DeviceRow = typeof devices.$inferSelect;
export type NewDevice = Omit<typeof devices.$inferInsert, "appId" | "installToken">;

/** Any constant: the first key of the per-account advisory lock taken while a device is created. */
const INSTALL_LOCK = 727_002;

/**
 * The one way a device comes to exist: by (app, install_token), checking the account's install cap
 * only when it would create one (existing devices keep working past the cap). Concurrent calls for the
 * same token create one device; exactly one caller gets `created: true`. Run it inside a transaction.
 *
 * Capped plans take a per-account transaction lock before counting, so two new devices cannot both
 * pass the last free slot. Throws the 403 of assertInstallCapacity when the cap is reached.
 */
export async function findOrCreateDevice(
  ctx: CoreContext,
  tx: Db,
  app: { id: number; userId: number },
  installToken: string,
  values: NewDevice,
): Promise<{ device: DeviceRow; created: boolean }> {
  const find = async () => (await tx.select().from(devices).where(and(eq(devices.appId, app.id), eq(devices.installToken, installToken))))[0];
  const existing = await find();
  if (existing) return { device: existing, created: false };
  const [owner] = await tx.select({ plan: users.plan }).from(users).where(eq(users.id, app.userId));
  if (owner && planOf(owner.plan).maxInstalls !== null) {
    await tx.execute(sql`select pg_advisory_xact_lock(${INSTALL_LOCK}, ${app.userId})`);
    // whoever held the lock may have created this very device: then it is not a new install
    const now = await find();
    if (now) return { device: now, created: false };
    await assertInstallCapacity(ctx, app.userId, 1, tx);
  }
  const [row] = await tx
    .insert(devices)
    .values({ ...values, appId: app.id, installToken })
    .onConflictDoNothing({ target: [devices.appId, devices.installToken] })
    .returning();
  if (row) return { device: row, created: true };
  return { device: (await find())!, created: false };
}

/** Tags merge: given keys are set, an empty value removes the key. */
export function mergeTags(tags: Record<string, string>) {
  const set: Record<string, string> = {};
  const remove: string[] = [];
  for (const [k, v] of Object.entries(tags)) {
    if (v === "") remove.push(k);
    else set[k] = v;
  }
  let expr = sql`${devices.tags} || ${JSON.stringify(set)}::jsonb`;
  for (const k of remove) expr = sql`(${expr}) - ${k}::text`;
  return expr;
}
