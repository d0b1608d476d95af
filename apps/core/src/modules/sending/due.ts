import { and, asc, eq, inArray, lte, or } from "drizzle-orm";
import { apps, packEventPushes, pushPacks, triggerQueue, users } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import { sendingAllowed } from "../billing/limits";
import { createSend } from "./create";

const BATCH = 200;

/**
 * `send-due`: claims due `pack_event` rows of trigger_queue (FOR UPDATE SKIP LOCKED, so replicas share
 * them) and turns each into a one-device send, in the same transaction that marks the row `sent` or
 * `skipped` (paused account, archived app, unpublished system pack, push deleted). Delayed sends are
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
        .where(and(eq(triggerQueue.kind, "pack_event"), eq(triggerQueue.status, "pending"), lte(triggerQueue.dueAt, at)))
        .orderBy(asc(triggerQueue.dueAt))
        .limit(BATCH)
        .for("update", { skipLocked: true });
      if (rows.length === 0) return 0;
      const appRows = await tx
        .select({ id: apps.id, archived: apps.archived, status: users.subscriptionStatus })
        .from(apps)
        .innerJoin(users, eq(users.id, apps.userId))
        .where(inArray(apps.id, [...new Set(rows.map((r) => r.appId))]));
      const packIds = [...new Set(rows.map((r) => r.packId).filter((x): x is number => x !== null))];
      const usable = packIds.length
        ? await tx.select({ id: pushPacks.id }).from(pushPacks).where(and(inArray(pushPacks.id, packIds), or(eq(pushPacks.isSystem, false), eq(pushPacks.isPublished, true))))
        : [];
      const pushIds = [...new Set(rows.map((r) => r.eventPushId).filter((x): x is number => x !== null))];
      const pushes = pushIds.length ? await tx.select({ id: packEventPushes.id, tag: packEventPushes.audienceTag }).from(packEventPushes).where(inArray(packEventPushes.id, pushIds)) : [];
      const ok: number[] = [];
      const ko: number[] = [];
      for (const r of rows) {
        const app = appRows.find((a) => a.id === r.appId);
        const push = pushes.find((p) => p.id === r.eventPushId);
        const live = app && !app.archived && sendingAllowed(app.status) && usable.some((p) => p.id === r.packId) && push;
        if (!live) {
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
