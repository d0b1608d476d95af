import { and, desc, eq, lt, type SQL } from "drizzle-orm";
import { activityLog } from "@pushstack/schema";
import { idCursor, pageLimit } from "../../lib/params";
import type { Actor, CoreContext } from "../../context";
import { loadOwnApp } from "../apps/service";

type Row = typeof activityLog.$inferSelect;

function view(r: Row) {
  return {
    id: r.id,
    kind: r.kind,
    at: r.at.toISOString(),
    ip: r.ip,
    method: r.method,
    external_id: r.externalId,
    event: r.event,
    params: r.params,
    outcome: r.outcome,
    message: r.message,
    devices: r.devices,
  };
}

const cursor = idCursor("a");

/** The app's activity log, newest first, keyset-paginated. */
export async function listActivity(ctx: CoreContext, actor: Actor, appId: number, q: { limit?: string; cursor?: string; kind?: string }) {
  await loadOwnApp(ctx, actor, appId);
  const limit = pageLimit(q.limit, 500);
  const where: SQL[] = [eq(activityLog.appId, appId)];
  if (q.kind) where.push(eq(activityLog.kind, q.kind));
  if (q.cursor) where.push(lt(activityLog.id, cursor.decode(q.cursor)));
  const rows = await ctx.db.select().from(activityLog).where(and(...where)).orderBy(desc(activityLog.id)).limit(limit + 1);
  const page = rows.slice(0, limit);
  return { items: page.map(view), next_cursor: rows.length > limit ? cursor.encode(page[page.length - 1]!.id) : null };
}
