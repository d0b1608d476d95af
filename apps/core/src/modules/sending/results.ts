import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { devices, notificationEvents, sendJobResults, sends, sendStatsDaily, SendSubjects, type SendResults } from "@pushstack/schema";
import type { BusMessage } from "@pushstack/bus";
import type { CoreContext } from "../../context";
import type { Db } from "../../db";
import { sendIdOf } from "./fanout";

type Delta = { sent?: number; failed?: number; delivered?: number; clicked?: number };

async function bump(tx: Db, s: { appId: number; day: string; source: string; sourceId: number; packId: number | null; templateId: number | null }, d: Delta) {
  const v = { sent: d.sent ?? 0, failed: d.failed ?? 0, delivered: d.delivered ?? 0, clicked: d.clicked ?? 0 };
  await tx
    .insert(sendStatsDaily)
    .values({ appId: s.appId, day: s.day, source: s.source, sourceId: s.sourceId, packId: s.packId ?? 0, templateId: s.templateId ?? 0, ...v })
    .onConflictDoUpdate({
      target: [sendStatsDaily.appId, sendStatsDaily.day, sendStatsDaily.source, sendStatsDaily.sourceId, sendStatsDaily.templateId],
      set: {
        sent: sql`${sendStatsDaily.sent} + ${v.sent}`,
        failed: sql`${sendStatsDaily.failed} + ${v.failed}`,
        delivered: sql`${sendStatsDaily.delivered} + ${v.delivered}`,
        clicked: sql`${sendStatsDaily.clicked} + ${v.clicked}`,
      },
    });
}

/** Applies one results message once (job id remembered in the same transaction). */
export async function applyResults(ctx: CoreContext, r: SendResults): Promise<void> {
  const sendId = Number(r.send_id);
  await ctx.db.transaction(async (tx) => {
    const [first] = await tx.insert(sendJobResults).values({ jobId: r.job_id }).onConflictDoNothing().returning();
    if (!first) return;
    const invalid = r.results.filter((x) => x.status === "token_invalid").map((x) => x.device_id);
    if (invalid.length) await tx.update(devices).set({ tokenInvalid: true }).where(and(eq(devices.appId, r.app_id), inArray(devices.id, invalid)));
    if (!Number.isSafeInteger(sendId)) return;
    const [s] = await tx.select().from(sends).where(eq(sends.id, sendId));
    if (!s) return;
    const sent = r.results.filter((x) => x.status === "sent").length;
    await bump(tx, s, { sent, failed: r.results.length - sent });
  });
}

/** Consumes `send.results` (durable, shared by replicas). */
export async function startResultsConsumer(ctx: CoreContext) {
  return ctx.bus.consume(
    { stream: SendSubjects.resultsStream, durable: "core-sending", filterSubject: SendSubjects.results, concurrency: 4 },
    async (m: BusMessage) => {
      let r: SendResults;
      try {
        r = m.json<SendResults>();
        if (typeof r?.job_id !== "string" || !Array.isArray(r.results)) throw new Error("malformed");
      } catch {
        ctx.log.warn("malformed send results dropped", { seq: m.seq });
        return m.term();
      }
      try {
        await applyResults(ctx, r);
        m.ack();
      } catch (err) {
        ctx.log.error("send results failed", { err, job_id: r.job_id });
        m.nak(1000);
      }
    },
  );
}

/** Reports folded per transaction. */
const ROLLUP_BATCH = 2000;

/**
 * `sending-rollup`: folds SDK delivered/clicked reports (notification_events, one row per device, msg
 * and kind) into send_stats_daily. It takes uncounted rows (partial index on `not counted`) with
 * FOR UPDATE SKIP LOCKED, bumps the counters and sets `counted` in the same transaction: each report
 * is counted once whatever order rows commit in (an id watermark would skip a row that commits after a
 * higher id was folded), and replicas share the work. Analytics reads never touch raw events.
 */
export async function rollup(ctx: CoreContext, _at: Date) {
  let total = 0;
  for (;;) {
    const n = await ctx.db.transaction(async (tx) => {
      const rows = await tx
        .select({ id: notificationEvents.id, msgId: notificationEvents.msgId, event: notificationEvents.event })
        .from(notificationEvents)
        .where(eq(notificationEvents.counted, false))
        .orderBy(asc(notificationEvents.id))
        .limit(ROLLUP_BATCH)
        .for("update", { skipLocked: true });
      if (rows.length === 0) return 0;
      const ids = [...new Set(rows.map((r) => sendIdOf(r.msgId)).filter((x): x is number => x !== null))];
      const found = ids.length ? await tx.select().from(sends).where(inArray(sends.id, ids)) : [];
      const byId = new Map(found.map((s) => [s.id, s]));
      const acc = new Map<number, Delta>();
      for (const r of rows) {
        const id = sendIdOf(r.msgId);
        if (id === null || !byId.has(id)) continue;
        const d = acc.get(id) ?? {};
        if (r.event === "delivered") d.delivered = (d.delivered ?? 0) + 1;
        else if (r.event === "clicked") d.clicked = (d.clicked ?? 0) + 1;
        acc.set(id, d);
      }
      for (const [id, d] of acc) await bump(tx, byId.get(id)!, d);
      await tx
        .update(notificationEvents)
        .set({ counted: true })
        .where(inArray(notificationEvents.id, rows.map((r) => r.id)));
      return rows.length;
    });
    total += n;
    if (n < ROLLUP_BATCH) break;
  }
  return { events: total };
}
