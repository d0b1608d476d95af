import { and, eq, gte, inArray, lte, sql, type SQL } from "drizzle-orm";
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
  scheduler_id?: string;
  template_id?: string;
  source?: string;
}

/** Where a send came from: a pack's weekly or event push, or a scheduler. */
export const SOURCES = ["pack_scheduled", "pack_event", "scheduler"] as const;
const PACK_SOURCES = ["pack_scheduled", "pack_event"];
const GROUPS = ["day", "push", "pack", "scheduler", "template"];

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const validDay = (s: string) => DAY.test(s) && !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().slice(0, 10) === s;
const ctr = (clicked: number, delivered: number) => (delivered > 0 ? Math.round((clicked / delivered) * 10000) / 10000 : 0);

/**
 * Sent / failed / delivered / clicked and CTR (clicked / delivered) of an app, from send_stats_daily
 * (aggregated; no raw event is read). Filters: date_from/date_to (UTC days, inclusive), source, push_id
 * (a pack push), pack_id, scheduler_id, template_id. group_by: `day` (basic analytics, every plan);
 * `push`, `pack`, `scheduler`, `template` (full analytics). Rows by push carry `source`, so pack pushes
 * and schedulers are told apart (their ids are from different tables).
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
  if (q.source !== undefined && q.source !== "") {
    if (!(SOURCES as readonly string[]).includes(q.source)) throw badRequest(`source must be one of ${SOURCES.join(", ")}`);
    where.push(eq(sendStatsDaily.source, q.source));
  }
  for (const f of ["push_id", "pack_id", "scheduler_id", "template_id"] as const) {
    const v = q[f];
    if (v === undefined || v === "") continue;
    if (!/^[1-9][0-9]{0,9}$/.test(v)) throw badRequest(`${f} must be a positive integer`);
    const n = Number(v);
    if (f === "push_id") where.push(inArray(sendStatsDaily.source, PACK_SOURCES), eq(sendStatsDaily.sourceId, n));
    else if (f === "pack_id") where.push(eq(sendStatsDaily.packId, n));
    else if (f === "scheduler_id") where.push(eq(sendStatsDaily.source, "scheduler"), eq(sendStatsDaily.sourceId, n));
    else where.push(eq(sendStatsDaily.templateId, n));
  }
  const group = q.group_by ?? "day";
  if (!GROUPS.includes(group)) throw badRequest(`group_by must be one of ${GROUPS.join(", ")}`);
  if (group !== "day" && !planOf(actor.plan).features.has("full_analytics")) {
    throw planRequired(`analytics by ${group} requires the ${lowestPlanWith("full_analytics").name} plan`);
  }
  if (group === "pack") where.push(inArray(sendStatsDaily.source, PACK_SOURCES));
  if (group === "scheduler" || group === "template") where.push(eq(sendStatsDaily.source, "scheduler"));
  // one grouping column set per group_by (typed loosely: drizzle cannot type a union of selections)
  const keys: Record<string, any> =
    group === "day"
      ? { day: sendStatsDaily.day }
      : group === "push"
        ? { source: sendStatsDaily.source, push_id: sendStatsDaily.sourceId, pack_id: sendStatsDaily.packId, template_id: sendStatsDaily.templateId }
        : group === "pack"
          ? { pack_id: sendStatsDaily.packId }
          : group === "scheduler"
            ? { source: sendStatsDaily.source, scheduler_id: sendStatsDaily.sourceId }
            : { source: sendStatsDaily.source, template_id: sendStatsDaily.templateId };
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
