import { and, eq, gte, lte, sql, type SQL } from "drizzle-orm";
import { sendStatsDaily } from "@pushstack/schema";
import { badRequest, planRequired } from "@pushstack/http";
import { lowestPlanWith, planOf } from "@pushstack/schema";
import type { Actor, CoreContext } from "../../context";
import { loadOwnApp } from "../apps/service";

export interface AnalyticsQuery {
  date_from?: string;
  date_to?: string;
  group_by?: string;
  push_id?: string;
  pack_id?: string;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const validDay = (s: string) => DAY.test(s) && !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().slice(0, 10) === s;
const ctr = (clicked: number, delivered: number) => (delivered > 0 ? Math.round((clicked / delivered) * 10000) / 10000 : 0);

/**
 * Sent / failed / delivered / clicked and CTR (clicked / delivered) of an app, from send_stats_daily
 * (aggregated; no raw event is read). Filters: date_from/date_to (UTC days, inclusive), push_id,
 * pack_id. group_by: `day` (basic analytics, every plan), `push` or `pack` (full analytics).
 */
export async function appAnalytics(ctx: CoreContext, actor: Actor, appId: number, q: AnalyticsQuery) {
  await loadOwnApp(ctx, actor, appId);
  const where: (SQL | undefined)[] = [eq(sendStatsDaily.appId, appId)];
  for (const f of ["date_from", "date_to"] as const) {
    const v = q[f];
    if (v === undefined || v === "") continue;
    if (!validDay(v)) throw badRequest(`${f} must be a date YYYY-MM-DD`);
    where.push(f === "date_from" ? gte(sendStatsDaily.day, v) : lte(sendStatsDaily.day, v));
  }
  for (const f of ["push_id", "pack_id"] as const) {
    const v = q[f];
    if (v === undefined || v === "") continue;
    if (!/^[1-9][0-9]{0,9}$/.test(v)) throw badRequest(`${f} must be a positive integer`);
    where.push(eq(f === "push_id" ? sendStatsDaily.sourceId : sendStatsDaily.packId, Number(v)));
  }
  const group = q.group_by ?? "day";
  if (!["day", "push", "pack"].includes(group)) throw badRequest("group_by must be one of day, push, pack");
  if (group !== "day" && !planOf(actor.plan).features.has("full_analytics")) {
    throw planRequired(`analytics by ${group} requires the ${lowestPlanWith("full_analytics").name} plan`);
  }
  // one grouping column set per group_by (typed loosely: drizzle cannot type a union of selections)
  const keys: Record<string, any> =
    group === "day"
      ? { day: sendStatsDaily.day }
      : group === "push"
        ? { source: sendStatsDaily.source, push_id: sendStatsDaily.sourceId, pack_id: sendStatsDaily.packId }
        : { pack_id: sendStatsDaily.packId };
  const rows = await ctx.db
    .select({
      ...keys,
      sent: sql<string>`sum(${sendStatsDaily.sent})`,
      failed: sql<string>`sum(${sendStatsDaily.failed})`,
      delivered: sql<string>`sum(${sendStatsDaily.delivered})`,
      clicked: sql<string>`sum(${sendStatsDaily.clicked})`,
    })
    .from(sendStatsDaily)
    .where(and(...where))
    .groupBy(...Object.values(keys))
    .orderBy(...Object.values(keys));
  const out = (rows as Record<string, unknown>[]).map((r) => {
    const n = { sent: Number(r.sent), failed: Number(r.failed), delivered: Number(r.delivered), clicked: Number(r.clicked) };
    const { sent: _s, failed: _f, delivered: _d, clicked: _c, ...k } = r;
    return { ...k, ...n, ctr: ctr(n.clicked, n.delivered) };
  });
  const totals = out.reduce((a, r) => ({ sent: a.sent + r.sent, failed: a.failed + r.failed, delivered: a.delivered + r.delivered, clicked: a.clicked + r.clicked }), {
    sent: 0,
    failed: 0,
    delivered: 0,
    clicked: 0,
  });
  return { app_id: appId, group_by: group, totals: { ...totals, ctr: ctr(totals.clicked, totals.delivered) }, rows: out };
}
