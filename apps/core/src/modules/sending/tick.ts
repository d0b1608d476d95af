import { and, eq, or, sql } from "drizzle-orm";
import { appPushPacks, apps, packLanguages, packScheduledPushes, pushPacks, sendingMarks, users } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import { sendingAllowed } from "../billing/limits";
import { createSend } from "./create";

/** Missed minutes older than this are not sent late (a push at 10:00 is wrong at 10:45); they are logged. */
export const CATCH_UP_MINUTES = 10;

/** Weekday as packs store it: 0 = Monday .. 6 = Sunday. */
const dayOfWeek = (d: Date) => (d.getUTCDay() + 6) % 7;
const hhmm = (d: Date) => d.toISOString().slice(11, 16);

/** Creates the sends of one UTC minute (idempotent: the send key is push + app + minute). */
async function tickMinute(ctx: CoreContext, minute: Date): Promise<number> {
  const rows = await ctx.db
    .select({
      pushId: packScheduledPushes.id,
      languageId: packScheduledPushes.languageId,
      tag: packScheduledPushes.audienceTag,
      packId: pushPacks.id,
      appId: apps.id,
      status: users.subscriptionStatus,
    })
    .from(packScheduledPushes)
    .innerJoin(packLanguages, eq(packLanguages.id, packScheduledPushes.languageId))
    .innerJoin(pushPacks, eq(pushPacks.id, packLanguages.packId))
    .innerJoin(appPushPacks, eq(appPushPacks.packId, pushPacks.id))
    .innerJoin(apps, eq(apps.id, appPushPacks.appId))
    .innerJoin(users, eq(users.id, apps.userId))
    .where(
      and(
        eq(packScheduledPushes.dayOfWeek, dayOfWeek(minute)),
        sql`to_char(${packScheduledPushes.sendTime}, 'HH24:MI') = ${hhmm(minute)}`,
        // pausing: an unpublished system pack stays attached but sends nothing; archived apps send nothing
        or(eq(pushPacks.isSystem, false), eq(pushPacks.isPublished, true)),
        eq(apps.archived, false),
      ),
    );
  let created = 0;
  for (const r of rows) {
    if (!sendingAllowed(r.status)) continue; // account past_due
    const id = await ctx.db.transaction((tx) =>
      createSend(tx, {
        key: `sched:${r.pushId}:${r.appId}:${minute.toISOString().slice(0, 16)}`,
        appId: r.appId,
        source: "pack_scheduled",
        sourceId: r.pushId,
        packId: r.packId,
        audience: { pack_id: r.packId, language_id: r.languageId, audience_tag: r.tag },
        renderAt: minute,
      }),
    );
    if (id !== null) created++;
  }
  return created;
}

/**
 * `schedule-tick` for the minute containing `at`, plus the minutes missed since the last tick (watermark
 * `schedule-tick` in sending_marks) within CATCH_UP_MINUTES. Exactly-once per (push, app, minute) comes
 * from the unique send key, so replicas, restarts and repeated runs send a minute once.
 */
export async function scheduleTick(ctx: CoreContext, at: Date) {
  const m = Math.floor(at.getTime() / 60_000);
  const [mark] = await ctx.db.select().from(sendingMarks).where(eq(sendingMarks.name, "schedule-tick"));
  let from = m - CATCH_UP_MINUTES;
  let skipped = 0;
  if (mark) {
    if (mark.value + 1 < from) {
      skipped = from - mark.value - 1;
      ctx.log.warn("schedule minutes skipped: too late to send", { from: new Date((mark.value + 1) * 60_000).toISOString(), minutes: skipped });
    } else from = Math.min(m, Math.max(from, mark.value + 1));
  }
  let sendsCreated = 0;
  for (let x = from; x <= m; x++) sendsCreated += await tickMinute(ctx, new Date(x * 60_000));
  await ctx.db
    .insert(sendingMarks)
    .values({ name: "schedule-tick", value: m })
    .onConflictDoUpdate({ target: sendingMarks.name, set: { value: sql`greatest(${sendingMarks.value}, ${m})` } });
  return { minutes: m - from + 1, skipped_minutes: skipped, sends: sendsCreated };
}
