import { and, asc, eq, inArray } from "drizzle-orm";
import { activityLog, apps, devices, type IngestPostback } from "@pushstack/schema";
import { AppError } from "@pushstack/http";
import type { CoreContext } from "../../context";
import { findOrCreateDevice, mergeTags, type DeviceRow } from "../devices/store";
import { EventStats, recordEvent } from "./record";

/** A user with more devices under one external id than this gets the postback on the oldest ones only. */
const MAX_DEVICES_PER_EXTERNAL_ID = 50;

/**
 * One accepted postback, in one transaction:
 * 1. the activity log row, keyed by the item id: a redelivered item finds it and stops here;
 * 2. the devices of the app with this external id (an SDK device registered with `ext_id`, or the
 *    `srv_<external_id>` device); none: `srv_<external_id>` is created, unless the account is at its
 *    install cap (then the postback is logged as refused and nothing else happens);
 * 3. segment / webmaster / offer merged into their tags;
 * 4. the event recorded on each (deposits numbered per device) and its triggers fired.
 * Devices are locked in id order, so concurrent postbacks of one user queue instead of deadlocking.
 */
export async function processPostback(ctx: CoreContext, item: IngestPostback): Promise<void> {
  const at = new Date(item.at);
  await ctx.db.transaction(async (tx) => {
    const [app] = await tx.select({ id: apps.id, userId: apps.userId }).from(apps).where(eq(apps.id, item.app_id));
    if (!app) return; // deleted since the edge accepted it: nothing left to record it on
    const [log] = await tx
      .insert(activityLog)
      .values({
        appId: app.id,
        kind: "postback",
        itemId: item.id,
        at,
        ip: item.ip,
        method: item.method,
        externalId: item.external_id,
        event: item.event,
        params: { ...item.params, ...item.tags },
      })
      .onConflictDoNothing({ target: activityLog.itemId })
      .returning({ id: activityLog.id });
    if (!log) return;

    const lockTargets = () =>
      tx
        .select()
        .from(devices)
        .where(and(eq(devices.appId, app.id), eq(devices.externalId, item.external_id)))
        .orderBy(asc(devices.id))
        .limit(MAX_DEVICES_PER_EXTERNAL_ID)
        .for("update");
    let targets: DeviceRow[] = await lockTargets();
    let createdId: number | null = null;
    if (targets.length === 0) {
      try {
        const r = await findOrCreateDevice(ctx, tx, app, `srv_${item.external_id}`, {
          externalId: item.external_id,
          source: "postback",
          createdAt: at,
          lastActiveAt: at,
        });
        if (r.created) createdId = r.device.id;
      } catch (err) {
        if (!(err instanceof AppError) || err.status !== 403) throw err;
        await tx.update(activityLog).set({ outcome: "refused", message: err.message }).where(eq(activityLog.id, log.id));
        return;
      }
      targets = await lockTargets();
    }

    if (Object.keys(item.tags).length) {
      await tx.update(devices).set({ tags: mergeTags(item.tags) }).where(inArray(devices.id, targets.map((d) => d.id)));
      for (const d of targets) d.tags = { ...d.tags, ...item.tags };
    }
    const touched: Array<{ device_id: number; event: string | null; created: boolean }> = [];
    // one user's devices may get different deposit numbers (dep on one, dep2 on another): their counter
    // rows are locked once, in a fixed order, at the end (see EventStats)
    const stats = new EventStats();
    for (const d of targets) {
      const rec = item.event ? await recordEvent(tx, d, { itemId: item.id, code: item.event, source: "postback", at }, stats) : null;
      touched.push({ device_id: d.id, event: rec?.code ?? null, created: d.id === createdId });
    }
    await tx.update(activityLog).set({ devices: touched }).where(eq(activityLog.id, log.id));
    await stats.flush(tx);
  });
}
