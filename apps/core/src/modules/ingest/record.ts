import { eq, sql } from "drizzle-orm";
import { appEventStats, deviceEvents, devices, isDeposit } from "@pushstack/schema";
import type { Db } from "../../db";
import type { DeviceRow } from "../devices/store";
import { fireTriggers } from "./triggers";

interface StatDelta {
  appId: number;
  code: string;
  count: number;
  devices: number;
  firstAt: Date;
  lastAt: Date;
}

/**
 * The Events group's counters (app_event_stats) a transaction owes, kept until it applies them in one
 * statement. Why not one upsert per event: the counter rows are hot (every `reg` of an app is the same
 * row) and a transaction that touches several of them in the order its events come (a postback reaching
 * two devices of one user records `dep2` on one and `dep` on the other) deadlocks with one that touches
 * them in the other order. `flush` locks the rows once, in (app, code) order, as late in the
 * transaction as the caller puts it, so the rows are held only until the commit.
 */
export class EventStats {
  private deltas = new Map<string, StatDelta>();

  add(appId: number, code: string, newOnDevice: boolean, at: Date): void {
    const key = `${appId}\u0000${code}`;
    const d = this.deltas.get(key);
    if (!d) {
      this.deltas.set(key, { appId, code, count: 1, devices: newOnDevice ? 1 : 0, firstAt: at, lastAt: at });
      return;
    }
    d.count += 1;
    if (newOnDevice) d.devices += 1;
    if (at < d.firstAt) d.firstAt = at;
    if (at > d.lastAt) d.lastAt = at;
  }

  get size(): number {
    return this.deltas.size;
  }

  /** One INSERT ... ON CONFLICT for everything added (none: no statement), then empty again. */
  async flush(tx: Db): Promise<void> {
    if (this.deltas.size === 0) return;
    // one total order (codes are ASCII) for every transaction: two of them lock the rows they share in the same order
    const rows = [...this.deltas.values()].sort((a, b) => a.appId - b.appId || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
    this.deltas.clear();
    await tx
      .insert(appEventStats)
      .values(rows)
      .onConflictDoUpdate({
        target: [appEventStats.appId, appEventStats.code],
        set: {
          count: sql`${appEventStats.count} + excluded.count`,
          devices: sql`${appEventStats.devices} + excluded.devices`,
          firstAt: sql`least(${appEventStats.firstAt}, excluded.first_at)`,
          lastAt: sql`greatest(${appEventStats.lastAt}, excluded.last_at)`,
        },
      });
  }
}

/**
 * Records one event on a device the caller has locked (SELECT ... FOR UPDATE in this transaction):
 * deposits are numbered from the locked row's count (`dep`, `dep2`, ...), so concurrent deposits of one
 * device queue on the lock and never share or skip a number. The (item, device) key makes a redelivered
 * item a no-op (null). Appends the code to the device's distinct event list and fires the triggers.
 *
 * The app's counters for the code (count +1; devices +1 when the code is new on this device) go into
 * `stats`, for the caller to flush as the last statement before its commit.
 */
export async function recordEvent(
  tx: Db,
  device: DeviceRow,
  e: { itemId: string; code: string; source: "postback" | "sdk"; at: Date; data?: Record<string, unknown> | null },
  stats: EventStats,
): Promise<{ code: string; eventId: number } | null> {
  const deposit = isDeposit(e.code);
  const deposits = deposit ? device.deposits + 1 : device.deposits;
  const code = deposit ? (deposits === 1 ? "dep" : `dep${deposits}`) : e.code;
  const [row] = await tx
    .insert(deviceEvents)
    .values({ itemId: e.itemId, deviceId: device.id, appId: device.appId, code, source: e.source, at: e.at, data: e.data ?? null })
    .onConflictDoNothing({ target: [deviceEvents.itemId, deviceEvents.deviceId] })
    .returning({ id: deviceEvents.id });
  if (!row) return null;
  await tx
    .update(devices)
    .set({
      deposits,
      events: sql`case when ${code}::text = any(${devices.events}) then ${devices.events} else array_append(${devices.events}, ${code}::text) end`,
    })
    .where(eq(devices.id, device.id));
  device.deposits = deposits;
  // the locked row's list: whether this device had the code before this event
  const newOnDevice = !device.events.includes(code);
  if (newOnDevice) device.events = [...device.events, code];
  await fireTriggers(tx, { appId: device.appId, deviceId: device.id, deviceLanguage: device.language, eventId: row.id, code, at: e.at });
  stats.add(device.appId, code, newOnDevice, e.at);
  return { code, eventId: row.id };
}
