import { and, eq, isNull, lte, or, sql } from "drizzle-orm";
import { devices, notificationEvents, type IngestInfo, type IngestNotification, type IngestSdkEvent } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import { mergeTags } from "../devices/store";
import { EventStats, recordEvent } from "./record";

const later = (at: Date) => sql`greatest(${devices.lastActiveAt}, ${at.toISOString()}::timestamptz)`;

/**
 * SDK device info. Items of one device may be handled out of order (several consumers), so an info
 * applies only when it is newer than the last one applied (`info_at`); replaying it changes nothing.
 */
export async function processInfo(ctx: CoreContext, item: IngestInfo): Promise<void> {
  const at = new Date(item.at);
  const set: Record<string, unknown> = { platform: item.platform, infoAt: at, lastActiveAt: later(at) };
  if (item.transport_type !== undefined) set.transportType = item.transport_type;
  if (item.transport_token !== undefined) {
    set.transportToken = item.transport_token;
    set.tokenInvalid = false;
  }
  if (item.language !== undefined) set.language = item.language;
  if (item.country !== undefined) set.country = item.country;
  if (item.tz_sec !== undefined) set.tzSec = item.tz_sec;
  if (item.model !== undefined) set.model = item.model;
  if (item.ext_id) set.externalId = item.ext_id;
  if (item.tags && Object.keys(item.tags).length) set.tags = mergeTags(item.tags);
  await ctx.db
    .update(devices)
    .set(set)
    .where(and(eq(devices.id, item.device_id), eq(devices.appId, item.app_id), or(isNull(devices.infoAt), lte(devices.infoAt, at))));
}

/** `delivered` / `clicked`: one row per (device, msg_id, event); a repeat (or a redelivery) is ignored. */
export async function processNotification(ctx: CoreContext, item: IngestNotification): Promise<void> {
  const at = new Date(item.at);
  await ctx.db.transaction(async (tx) => {
    const [device] = await tx
      .update(devices)
      .set({ lastActiveAt: later(at) })
      .where(and(eq(devices.id, item.device_id), eq(devices.appId, item.app_id)))
      .returning({ id: devices.id });
    if (!device) return;
    await tx.insert(notificationEvents).values({ deviceId: device.id, appId: item.app_id, msgId: item.msg_id, event: item.event, at }).onConflictDoNothing();
  });
}

/** Lifecycle (`onscreen`, `background`, `closed`) and custom SDK events: recorded and triggering like postback events. */
export async function processSdkEvent(ctx: CoreContext, item: IngestSdkEvent): Promise<void> {
  const at = new Date(item.at);
  await ctx.db.transaction(async (tx) => {
    const [device] = await tx
      .select()
      .from(devices)
      .where(and(eq(devices.id, item.device_id), eq(devices.appId, item.app_id)))
      .for("update");
    if (!device) return;
    const stats = new EventStats();
    const rec = await recordEvent(tx, device, { itemId: item.id, code: item.event, source: "sdk", at, data: item.data ?? null }, stats);
    if (rec) await tx.update(devices).set({ lastActiveAt: later(at) }).where(eq(devices.id, device.id));
    // last: the app's counter row (hot: every event of that code) is held only until the commit
    await stats.flush(tx);
  });
}
