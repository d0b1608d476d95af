import { and, asc, eq, inArray, lte, or, sql } from "drizzle-orm";
import { apps, packEventPushes, pushPacks, schedulers, triggerQueue, users } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import type { Db } from "../../db";
import { sendingAllowed } from "../billing/limits";
import { hasFeature } from "../billing/entitlements";
import { createSend } from "./create";

const BATCH = 200;

type Row = typeof triggerQueue.$inferSelect;

/**
 * `send-due`: claims due `pack_event` and `scheduler` rows of trigger_queue (FOR UPDATE SKIP LOCKED, so
 * replicas share them) and turns each into a one-device send, in the same transaction that marks the row
 * `sent` or `skipped` (paused account, archived app, unpublished system pack, push deleted; for
 * schedulers: paused or deleted, or an owner whose plan no longer has event triggers). Delayed sends are
 * kept in PostgreSQL until due: they survive restarts of every process and are claimed once.
 */
export async function sendDue(ctx: CoreContext, at: Date) {
  let sent = 0;
  let skipped = 0;
  for (;;) {
    const n = await ctx.db.transaction(async (tx) => {
      const rows = await tx
        .select()
        .from(triggerQueue)
        .where(and(inArray(triggerQueue.kind, ["pack_event", "scheduler"]), eq(triggerQueue.status, "pending"), lte(triggerQueue.dueAt, at)))
        .orderBy(asc(triggerQueue.dueAt))
        .limit(BATCH)
        .for("update", { skipLocked: true });
      if (rows.length === 0) return 0;
      const appRows = await tx
        .select({ id: apps.id, archived: apps.archived, status: users.subscriptionStatus, plan: users.plan })
        .from(apps)
        .innerJoin(users, eq(users.id, apps.userId))
        .where(inArray(apps.id, [...new Set(rows.map((r) => r.appId))]));
      const live = (r: Row) => {
        const app = appRows.find((a) => a.id === r.appId);
        return app && !app.archived && sendingAllowed(app.status) ? app : null;
      };
      const ok: number[] = [];
      const ko: number[] = [];
      const packRows = rows.filter((r) => r.kind === "pack_event");
      if (packRows.length) {
        const packIds = [...new Set(packRows.map((r) => r.packId).filter((x): x is number => x !== null))];
        const usable = packIds.length
          ? await tx.select({ id: pushPacks.id }).from(pushPacks).where(and(inArray(pushPacks.id, packIds), or(eq(pushPacks.isSystem, false), eq(pushPacks.isPublished, true))))
          : [];
        const pushIds = [...new Set(packRows.map((r) => r.eventPushId).filter((x): x is number => x !== null))];
        const pushes = pushIds.length ? await tx.select({ id: packEventPushes.id, tag: packEventPushes.audienceTag }).from(packEventPushes).where(inArray(packEventPushes.id, pushIds)) : [];
        for (const r of packRows) {
          const push = pushes.find((p) => p.id === r.eventPushId);
          if (!live(r) || !usable.some((p) => p.id === r.packId) || !push) {
            ko.push(r.id);
            continue;
          }
          await createSend(tx, {
            key: `event:${r.id}`,
            appId: r.appId,
            source: "pack_event",
            sourceId: push.id,
            packId: r.packId,
            audience: { pack_id: r.packId, device_id: r.deviceId, audience_tag: push.tag },
            renderAt: r.dueAt,
          });
          ok.push(r.id);
        }
      }
      const schedRows = rows.filter((r) => r.kind === "scheduler");
      if (schedRows.length) {
        const fired = await schedulerSends(tx, schedRows, live);
        ok.push(...fired.ok);
        ko.push(...fired.ko);
      }
      if (ok.length) await tx.update(triggerQueue).set({ status: "sent" }).where(inArray(triggerQueue.id, ok));
      if (ko.length) await tx.update(triggerQueue).set({ status: "skipped" }).where(inArray(triggerQueue.id, ko));
      sent += ok.length;
      skipped += ko.length;
      return rows.length;
    });
    if (n < BATCH) break;
  }
  return { sends: sent, skipped };
}

/**
 * Event-triggered schedulers: one send per due row to its device, with the scheduler's template and
 * filters as they are now (the fan-out skips a device that no longer matches them). The owner's plan
 * is checked again here: a downgrade between the event and the due time stops the send.
 */
async function schedulerSends(tx: Db, rows: Row[], live: (r: Row) => { plan: string } | null) {
  const ids = [...new Set(rows.map((r) => r.schedulerId).filter((x): x is number => x !== null))];
  const found = ids.length
    ? await tx
        .select({ id: schedulers.id, appId: schedulers.appId, kind: schedulers.kind, status: schedulers.status, pushId: schedulers.pushId, filters: schedulers.filters })
        .from(schedulers)
        .where(inArray(schedulers.id, ids))
    : [];
  const ok: number[] = [];
  const ko: number[] = [];
  const last = new Map<number, Date>();
  for (const r of rows) {
    const sc = found.find((x) => x.id === r.schedulerId);
    const app = live(r);
    if (!app || !sc || sc.appId !== r.appId || sc.kind !== "event" || sc.status !== "active" || !hasFeature(app.plan, "event_triggers")) {
      ko.push(r.id);
      continue;
    }
    const id = await createSend(tx, {
      key: `event:${r.id}`,
      appId: r.appId,
      source: "scheduler",
      sourceId: sc.id,
      packId: null,
      templateId: sc.pushId,
      audience: { scheduler_id: sc.id, template_id: sc.pushId, filters: sc.filters ?? {}, device_id: r.deviceId },
      renderAt: r.dueAt,
    });
    if (id !== null && (last.get(sc.id)?.getTime() ?? 0) < r.dueAt.getTime()) last.set(sc.id, r.dueAt);
    ok.push(r.id);
  }
  // one update per scheduler and batch, not per send (a busy event scheduler is one hot row)
  for (const [id, when] of last) {
    await tx
      .update(schedulers)
      .set({ lastSentAt: sql`greatest(${schedulers.lastSentAt}, ${when.toISOString()}::timestamptz)` })
      .where(eq(schedulers.id, id));
  }
  return { ok, ko };
}
