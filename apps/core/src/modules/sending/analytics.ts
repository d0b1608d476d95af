import { and, eq, gte, inArray, lte, sql, type SQL } from "drizzle-orm";
import type { Static } from "@sinclair/typebox";
import { apps, pushPacks, sendStatsDaily, ANALYTICS_SOURCES, type AnalyticsQuery as AnalyticsQuerySchema } from "@pushstack/schema";
import { badRequest, notFound, planRequired } from "@pushstack/http";
import { queryId } from "../../lib/params";
import { lowestPlanWith, planOf } from "@pushstack/schema";
import type { Actor, CoreContext } from "../../context";
import { loadOwnApp } from "../apps/service";

export type AnalyticsQuery = Static<typeof AnalyticsQuerySchema>;

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
  return { app_id: appId, ...(await report(ctx, eq(sendStatsDaily.appId, appId), q, { groups: GROUPS, full: hasFull(actor) })) };
}

/**
 * The same figures over all the caller's apps (an app-scoped key: its app), or the one `app_id`;
 * `group_by=app` compares apps (a pack attached to several apps, say, with `pack_id`).
 */
export async function accountAnalytics(ctx: CoreContext, actor: Actor, q: AnalyticsQuery & { app_id?: string }) {
  let scope: SQL;
  if (q.app_id !== undefined && q.app_id !== "") {
    const id = queryId(q.app_id, "app_id");
    await loadOwnApp(ctx, actor, id);
    scope = eq(sendStatsDaily.appId, id);
  } else if (actor.appId !== null) scope = eq(sendStatsDaily.appId, actor.appId);
  else scope = inArray(sendStatsDaily.appId, ctx.db.select({ id: apps.id }).from(apps).where(eq(apps.userId, actor.userId)));
  return report(ctx, scope, q, { groups: [...GROUPS, "app"], full: hasFull(actor) });
}

/** Administrators: one pack's figures over every app it is sent to, whoever owns them (a system pack's reach). */
export async function packAnalytics(ctx: CoreContext, packId: number, q: AnalyticsQuery) {
  const [pack] = await ctx.db.select({ id: pushPacks.id }).from(pushPacks).where(eq(pushPacks.id, packId));
  if (!pack) throw notFound("push pack");
  if (q.pack_id !== undefined && q.pack_id !== "") throw badRequest("pack_id is given by the path");
  return { pack_id: packId, ...(await report(ctx, eq(sendStatsDaily.packId, packId), q, { groups: [...GROUPS, "app"], full: true })) };
}

/** The grouping columns of each group_by (typed loosely: drizzle cannot type a union of selections). */
const GROUP_KEYS: Record<string, Record<string, any>> = {
  day: { day: sendStatsDaily.day },
  app: { app_id: sendStatsDaily.appId },
  push: { source: sendStatsDaily.source, push_id: sendStatsDaily.sourceId, pack_id: sendStatsDaily.packId, template_id: sendStatsDaily.templateId },
  pack: { pack_id: sendStatsDaily.packId },
  scheduler: { source: sendStatsDaily.source, scheduler_id: sendStatsDaily.sourceId },
  template: { source: sendStatsDaily.source, template_id: sendStatsDaily.templateId },
};

const hasFull = (actor: Actor) => planOf(actor.plan).features.has("full_analytics");

async function report(ctx: CoreContext, scope: SQL, q: AnalyticsQuery, o: { groups: string[]; full: boolean }) {
  const where: (SQL | undefined)[] = [scope];
  for (const f of ["date_from", "date_to"] as const) {
    const v = q[f];
    if (v === undefined || v === "") continue;
    if (!validDay(v)) throw badRequest(`${f} must be a date YYYY-MM-DD`);
    where.push(f === "date_from" ? gte(sendStatsDaily.day, v) : lte(sendStatsDaily.day, v));
  }
  if (q.source !== undefined && q.source !== "") {
    if (!(ANALYTICS_SOURCES as readonly string[]).includes(q.source)) throw badRequest(`source must be one of ${ANALYTICS_SOURCES.join(", ")}`);
    where.push(eq(sendStatsDaily.source, q.source));
  }
  for (const f of ["push_id", "pack_id", "scheduler_id", "template_id"] as const) {
    const v = q[f];
    if (v === undefined || v === "") continue;
    const n = queryId(v, f);
    if (f === "push_id") where.push(inArray(sendStatsDaily.source, PACK_SOURCES), eq(sendStatsDaily.sourceId, n));
    else if (f === "pack_id") where.push(eq(sendStatsDaily.packId, n));
    else if (f === "scheduler_id") where.push(eq(sendStatsDaily.source, "scheduler"), eq(sendStatsDaily.sourceId, n));
    else where.push(eq(sendStatsDaily.templateId, n));
  }
  const group = q.group_by ?? "day";
  if (!o.groups.includes(group)) throw badRequest(`group_by must be one of ${o.groups.join(", ")}`);
  if (group !== "day" && !o.full) {
    throw planRequired(`analytics by ${group} requires the ${lowestPlanWith("full_analytics").name} plan`);
  }
  if (group === "pack") where.push(inArray(sendStatsDaily.source, PACK_SOURCES));
  if (group === "scheduler" || group === "template") where.push(eq(sendStatsDaily.source, "scheduler"));
  const keys = GROUP_KEYS[group]!;
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
  return { group_by: group, totals: { ...totals, ctr: ctr(totals.clicked, totals.delivered) }, rows: out };
}
