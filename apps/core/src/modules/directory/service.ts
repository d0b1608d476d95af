import { eq } from "drizzle-orm";
import { apps, users, Subjects, type AppDirectoryEntry } from "@pushstack/schema";
import type { CoreContext } from "../../context";

/**
 * The app directory: what an edge must know about an app to take postbacks and SDK calls without a
 * database. Core writes it to a KV bucket after every change and resyncs it in full at start, so an
 * edge that (re)connects sees current values.
 */
export async function directoryEntries(ctx: CoreContext, where?: { appId?: number; userId?: number }) {
  const q = ctx.db
    .select({ app: apps, plan: users.plan, status: users.subscriptionStatus })
    .from(apps)
    .innerJoin(users, eq(users.id, apps.userId));
  const rows = where?.appId ? await q.where(eq(apps.id, where.appId)) : where?.userId ? await q.where(eq(apps.userId, where.userId)) : await q;
  return rows.map(
    (r): AppDirectoryEntry => ({
      id: r.app.id,
      user_id: r.app.userId,
      archived: r.app.archived,
      postback_token: r.app.postbackToken,
      platform: r.app.platform,
      plan: r.plan,
      subscription_status: r.status,
      updated_at: r.app.updatedAt.toISOString(),
    }),
  );
}

async function bucket(ctx: CoreContext) {
  return ctx.bus.kv(Subjects.appDirectoryBucket);
}

/** After a change to one app (or all apps of a user, e.g. a plan change). Deleted apps are removed. */
export async function publishDirectory(ctx: CoreContext, where: { appId?: number; userId?: number }) {
  const kv = await bucket(ctx);
  const entries = await directoryEntries(ctx, where);
  for (const e of entries) await kv.put(String(e.id), JSON.stringify(e));
  if (where.appId && entries.length === 0) await kv.delete(String(where.appId));
}

export async function syncDirectory(ctx: CoreContext) {
  const kv = await bucket(ctx);
  const entries = await directoryEntries(ctx);
  const live = new Set(entries.map((e) => String(e.id)));
  for (const e of entries) await kv.put(String(e.id), JSON.stringify(e));
  for (const key of await kv.keys()) if (!live.has(key)) await kv.delete(key);
  return entries.length;
}
