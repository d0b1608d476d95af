import { eq, sql } from "drizzle-orm";
import { deviceEvents, devices, isDeposit } from "@pushstack/schema";
import type { Db } from "../../db";
import type { DeviceRow } from "../devices/store";
import { fireTriggers } from "./triggers";

/**
 * Records one event on a device the caller has locked (SELECT ... FOR UPDATE in this transaction):
 * deposits are numbered from the locked row's count (`dep`, `dep2`, ...), so concurrent deposits of one
 * device queue on the lock and never share or skip a number. The (item, device) key makes a redelivered
 * item a no-op (null). Appends the code to the device's distinct event list and fires the triggers.
 */
export async function recordEvent(
  tx: Db,
  device: DeviceRow,
  e: { itemId: string; code: string; source: "postback" | "sdk"; at: Date; data?: Record<string, unknown> | null },
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
  if (!device.events.includes(code)) device.events = [...device.events, code];
  await fireTriggers(tx, { appId: device.appId, deviceId: device.id, deviceLanguage: device.language, eventId: row.id, code, at: e.at });
  return { code, eventId: row.id };
}
