import { and, asc, eq, gt, inArray, sql } from "drizzle-orm";
import { devices, notificationEvents, sendJobResults, sendingMarks, sends, sendStatsDaily, SendSubjects, type SendResults } from "@pushstack/schema";
import type { BusMessage } from "@pushstack/bus";
import type { CoreContext } from "../../context";
import type { Db } from "../../db";
import { sendIdOf } from "./fanout";

type Delta = { sent?: number; failed?: number; delivered?: number; clicked?: number };

async function bump(tx: Db, s: { appId: number; day: string; source: string; sourceId: number; packId: number | null }, d: Delta) {
  const v = { sent: d.sent ?? 0, failed: d.failed ?? 0, delivered: d.delivered ?? 0, clicked: d.clicked ?? 0 };
  await tx
    .insert(sendStatsDaily)
    .values({ appId: s.appId, day: s.day, source: s.source, sourceId: s.sourceId, packId: s.packId ?? 0, ...v })
    .onConflictDoUpdate({
      target: [sendStatsDaily.appId, sendStatsDaily.day, sendStatsDaily.source, sendStatsDaily.sourceId],
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

/**
 * `sending-rollup`: folds new SDK delivered/clicked reports (notification_events, one row per device,
 * msg and kind) into send_stats_daily, past a watermark on their id held under a row lock, so each
 * report is counted once and analytics reads never touch raw events.
 */
export async function rollup(ctx: CoreContext, _at: Date) {
  let total = 0;
  for (;;) {
    const n = await ctx.db.transaction(async (tx) => {
      await tx.insert(sendingMarks).values({ name: "rollup", value: 0 }).onConflictDoNothing();
      const [mark] = await tx.select().from(sendingMarks).where(eq(sendingMarks.name, "rollup")).for("update");
      const rows = await tx
        .select({ id: notificationEvents.id, msgId: notificationEvents.msgId, event: notificationEvents.event })
        .from(notificationEvents)
        .where(gt(notificationEvents.id, mark!.value))
        .orderBy(asc(notificationEvents.id))
        .limit(2000);
      if (rows.length === 0) return 0;
      const ids = [...new Set(rows.map((r) => sendIdOf(r.msgId)).filter((x): x is number => x !== null))];
      const found = ids.length ? await tx.select().from(sends).where(inArray(sends.id, ids)) : [];
      const acc = new Map<number, Delta>();
      for (const r of rows) {
        const id = sendIdOf(r.msgId);
        if (id === null || !found.some((s) => s.id === id)) continue;
        const d = acc.get(id) ?? {};
        if (r.event === "delivered") d.delivered = (d.delivered ?? 0) + 1;
        else if (r.event === "clicked") d.clicked = (d.clicked ?? 0) + 1;
        acc.set(id, d);
      }
      for (const [id, d] of acc) await bump(tx, found.find((s) => s.id === id)!, d);
      await tx.update(sendingMarks).set({ value: rows[rows.length - 1]!.id }).where(eq(sendingMarks.name, "rollup"));
      return rows.length;
    });
    total += n;
    if (n < 2000) break;
  }
  return { events: total };
}
