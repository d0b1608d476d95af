import { and, eq, inArray, or } from "drizzle-orm";
import { appPushPacks, packEventPushes, packLanguages, pushPacks, schedulers, triggerQueue, users } from "@pushstack/schema";
import type { Db } from "../../db";
import { hasFeature } from "../billing/entitlements";

/**
 * The pack language a device gets: its own language (exact, then same primary language, preferring a
 * code without region), else the pack's fallback language; null when the pack has neither.
 */
export function chooseLanguage<L extends { id: number; code: string }>(deviceLanguage: string | null, languages: L[], fallback: string): L | null {
  const lower = (s: string) => s.toLowerCase();
  if (deviceLanguage) {
    const want = lower(deviceLanguage);
    const exact = languages.find((l) => lower(l.code) === want);
    if (exact) return exact;
    const primary = want.split("-")[0];
    const same = languages.filter((l) => lower(l.code).split("-")[0] === primary);
    if (same.length) return same.find((l) => !l.code.includes("-")) ?? same[0]!;
  }
  return languages.find((l) => lower(l.code) === lower(fallback)) ?? null;
}

/**
 * "Fires" the triggers of a recorded event by writing what must be sent, and when, into trigger_queue
 * (the send orchestration takes it from there), in the caller's transaction:
 * - one `scheduler` row per active event-triggered scheduler of the app whose event_code is the code as
 *   recorded, when the owner's plan has event triggers (checked now: a downgraded owner's schedulers
 *   stop firing), due `delay_minutes` after the event;
 * - one `pack_event` row per event push of an attached, usable pack (own, or published system pack)
 *   whose event_code is the code as recorded (`dep3` fires on the third deposit only), in the pack
 *   language chosen for the device, due `delay_minutes` after the event.
 */
export async function fireTriggers(
  tx: Db,
  e: { appId: number; deviceId: number; deviceLanguage: string | null; eventId: number; code: string; at: Date },
): Promise<number> {
  return (await fireSchedulers(tx, e)) + (await firePackEvents(tx, e));
}

async function fireSchedulers(tx: Db, e: { appId: number; deviceId: number; eventId: number; code: string; at: Date }): Promise<number> {
  const found = await tx
    .select({ id: schedulers.id, delay: schedulers.delayMinutes, plan: users.plan })
    .from(schedulers)
    .innerJoin(users, eq(users.id, schedulers.userId))
    .where(and(eq(schedulers.appId, e.appId), eq(schedulers.eventCode, e.code), eq(schedulers.kind, "event"), eq(schedulers.status, "active")));
  const rows = found
    .filter((s) => hasFeature(s.plan, "event_triggers"))
    .map((s) => ({
      kind: "scheduler",
      appId: e.appId,
      deviceId: e.deviceId,
      eventId: e.eventId,
      eventCode: e.code,
      schedulerId: s.id,
      dueAt: new Date(e.at.getTime() + s.delay * 60_000),
    }));
  if (rows.length) await tx.insert(triggerQueue).values(rows).onConflictDoNothing();
  return rows.length;
}

async function firePackEvents(
  tx: Db,
  e: { appId: number; deviceId: number; deviceLanguage: string | null; eventId: number; code: string; at: Date },
): Promise<number> {
  const packs = await tx
    .select({ id: pushPacks.id, fallback: pushPacks.fallbackLanguage })
    .from(appPushPacks)
    .innerJoin(pushPacks, eq(pushPacks.id, appPushPacks.packId))
    // an unpublished system pack keeps its attachments but sends nothing
    .where(and(eq(appPushPacks.appId, e.appId), or(eq(pushPacks.isSystem, false), eq(pushPacks.isPublished, true))));
  if (packs.length === 0) return 0;
  const pushes = await tx
    .select({ id: packEventPushes.id, languageId: packEventPushes.languageId, delay: packEventPushes.delayMinutes })
    .from(packEventPushes)
    .innerJoin(packLanguages, eq(packLanguages.id, packEventPushes.languageId))
    .where(and(inArray(packLanguages.packId, packs.map((p) => p.id)), eq(packEventPushes.eventCode, e.code)));
  if (pushes.length === 0) return 0;
  const languages = await tx
    .select({ id: packLanguages.id, packId: packLanguages.packId, code: packLanguages.languageCode })
    .from(packLanguages)
    .where(inArray(packLanguages.packId, packs.map((p) => p.id)));
  const rows = [];
  for (const pack of packs) {
    const lang = chooseLanguage(e.deviceLanguage, languages.filter((l) => l.packId === pack.id), pack.fallback);
    if (!lang) continue;
    for (const p of pushes.filter((x) => x.languageId === lang.id)) {
      rows.push({
        kind: "pack_event",
        appId: e.appId,
        deviceId: e.deviceId,
        eventId: e.eventId,
        eventCode: e.code,
        packId: pack.id,
        languageId: lang.id,
        eventPushId: p.id,
        dueAt: new Date(e.at.getTime() + p.delay * 60_000),
      });
    }
  }
  if (rows.length) await tx.insert(triggerQueue).values(rows).onConflictDoNothing();
  return rows.length;
}
