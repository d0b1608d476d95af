import { and, eq, gt, lte, or, sql, type SQL } from "drizzle-orm";
import { appPushPacks, apps, packLanguages, packScheduledPushes, pushPacks, schedulers, sendingMarks, users } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import { sendingAllowed } from "../billing/limits";
import { createSend } from "./create";

/** Missed minutes older than this are not sent late (a push at 10:00 is wrong at 10:45); they are logged. */
export const CATCH_UP_MINUTES = 10;

/** Weekday as packs store it: 0 = Monday .. 6 = Sunday. */
const dayOfWeek = (d: Date) => (d.getUTCDay() + 6) % 7;
const hhmm = (d: Date) => d.toISOString().slice(11, 16);
const minuteOf = (d: Date) => new Date(Math.floor(d.getTime() / 60_000) * 60_000);

/** Creates the sends of one UTC minute: pack pushes and weekly schedulers (idempotent: the send key holds the minute). */
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
  return created + (await weeklySchedulers(ctx, minute));
}

/** Active schedulers of one type whose app may send (not archived, account not past_due), narrowed by `when`. */
function liveSchedulers(ctx: CoreContext, kind: "weekly" | "once", ...when: SQL[]) {
  return ctx.db
    .select({ id: schedulers.id, sendAt: schedulers.sendAt })
    .from(schedulers)
    .innerJoin(apps, eq(apps.id, schedulers.appId))
    .innerJoin(users, eq(users.id, apps.userId))
    .where(and(eq(schedulers.kind, kind), eq(schedulers.status, "active"), eq(apps.archived, false), sql`${users.subscriptionStatus} <> 'past_due'`, ...when));
}

/**
 * Sends one scheduler to its filtered audience, once per `key`, in a transaction that locks the
 * scheduler row and re-reads it: a pause (or a second replica that already sent a `once`) since the
 * tick's read wins. A `once` scheduler becomes `completed` in the same transaction as its send.
 */
async function fireScheduler(ctx: CoreContext, id: number, minute: Date, once: boolean): Promise<boolean> {
  return ctx.db.transaction(async (tx) => {
    const [sc] = await tx.select().from(schedulers).where(and(eq(schedulers.id, id), eq(schedulers.status, "active"))).for("update");
    if (!sc) return false;
    const sendId = await createSend(tx, {
      key: `sched-s:${sc.id}:${minute.toISOString().slice(0, 16)}`,
      appId: sc.appId,
      source: "scheduler",
      sourceId: sc.id,
      packId: null,
      templateId: sc.pushId,
      audience: { scheduler_id: sc.id, template_id: sc.pushId, filters: sc.filters ?? {} },
      renderAt: minute,
    });
    if (sendId === null) {
      // that minute was sent already (a `once` re-armed for the same minute): nothing more to do
      if (once) await tx.update(schedulers).set({ status: "completed" }).where(eq(schedulers.id, sc.id));
      return false;
    }
    await tx
      .update(schedulers)
      .set({ lastSentAt: minute, ...(once ? { status: "completed" } : {}) })
      .where(eq(schedulers.id, sc.id));
    return true;
  });
}

/** Weekly schedulers whose day and HH:MM (UTC) are this minute. */
async function weeklySchedulers(ctx: CoreContext, minute: Date): Promise<number> {
  const rows = await liveSchedulers(
    ctx,
    "weekly",
    sql`${dayOfWeek(minute)}::smallint = any(${schedulers.daysOfWeek})`,
    sql`to_char(${schedulers.sendTime}, 'HH24:MI') = ${hhmm(minute)}`,
  );
  let created = 0;
  for (const r of rows) if (await fireScheduler(ctx, r.id, minute, false)) created++;
  return created;
}

/**
 * `once` schedulers due at `at` (send_at <= at), at most CATCH_UP_MINUTES late. Read by instant, not by
 * minute: a scheduler saved at 10:00:10 for 10:00:30 goes out with the 10:01 tick, not never. The send
 * key is the minute of send_at, so every tick that sees it agrees.
 */
async function onceSchedulers(ctx: CoreContext, at: Date): Promise<number> {
  const rows = await liveSchedulers(ctx, "once", lte(schedulers.sendAt, at), gt(schedulers.sendAt, new Date(at.getTime() - CATCH_UP_MINUTES * 60_000)));
  let created = 0;
  for (const r of rows) if (await fireScheduler(ctx, r.id, minuteOf(r.sendAt!), true)) created++;
  return created;
}

/**
 * `once` schedulers still active more than CATCH_UP_MINUTES after their send_at (no tick ran in time:
 * core was down) become `missed`, so the owner sees they were not sent (a new send_at re-arms them).
 */
async function missedOnceSchedulers(ctx: CoreContext, at: Date): Promise<number> {
  const missed = await ctx.db
    .update(schedulers)
    .set({ status: "missed", updatedAt: at })
    .where(and(eq(schedulers.kind, "once"), eq(schedulers.status, "active"), lte(schedulers.sendAt, new Date(at.getTime() - CATCH_UP_MINUTES * 60_000))))
    .returning({ id: schedulers.id, sendAt: schedulers.sendAt });
  for (const r of missed) ctx.log.warn("once scheduler missed: too late to send", { scheduler_id: r.id, send_at: r.sendAt?.toISOString() });
  return missed.length;
}

/**
 * `schedule-tick` for the minute containing `at`, plus the minutes missed since the last tick (watermark
 * `schedule-tick` in sending_marks) within CATCH_UP_MINUTES; then the `once` schedulers due by `at` (and
 * those too late to send, marked `missed`).
 * Exactly-once per (push, app, minute) and (scheduler, minute) comes from the unique send key, so
 * replicas, restarts and repeated runs send a minute once.
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
  sendsCreated += await onceSchedulers(ctx, at);
  const missed = await missedOnceSchedulers(ctx, at);
  await ctx.db
    .insert(sendingMarks)
    .values({ name: "schedule-tick", value: m })
    .onConflictDoUpdate({ target: sendingMarks.name, set: { value: sql`greatest(${sendingMarks.value}, ${m})` } });
  return { minutes: m - from + 1, skipped_minutes: skipped, sends: sendsCreated, missed_schedulers: missed };
}
