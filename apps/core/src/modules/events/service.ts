import { and, asc, count, desc, eq, sql, type SQL } from "drizzle-orm";
import { appEventDefinitions, appEventStats, apps, EventCodePattern, isBuiltinEvent } from "@pushstack/schema";
import { badRequest, conflict, notFound } from "@pushstack/http";
import { pageLimit } from "../../lib/params";
import type { Actor, CoreContext } from "../../context";
import { isUniqueViolation } from "../../lib/db-errors";
import { loadOwnApp } from "../apps/service";

/** Declarations per app: the codes themselves are open-ended, what an owner names by hand is not. */
export const MAX_DEFINITIONS_PER_APP = 1000;

type Sort = "count" | "code";

interface Entry {
  code: string;
  name: string | null;
  description: string | null;
  defined: boolean;
  count: number;
  devices: number;
  firstAt: Date | null;
  lastAt: Date | null;
}

function view(e: Entry) {
  return {
    code: e.code,
    name: e.name,
    description: e.description,
    builtin: isBuiltinEvent(e.code),
    defined: e.defined,
    count: e.count,
    devices: e.devices,
    first_at: e.firstAt ? e.firstAt.toISOString() : null,
    last_at: e.lastAt ? e.lastAt.toISOString() : null,
  };
}

// ---- cursors: the sort key of the last entry of a page -----------------------------------------

function cursorOf(sort: Sort, e: Entry): string {
  return Buffer.from(JSON.stringify(sort === "count" ? [sort, e.count, e.code] : [sort, e.code])).toString("base64url");
}

function parseCursor(sort: Sort, cursor: string): { count?: number; code: string } {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {}
  const bad = () => badRequest("cursor must be the next_cursor of a previous page with the same sort");
  if (!Array.isArray(v) || v[0] !== sort) throw bad();
  const code = v[v.length - 1];
  if (typeof code !== "string" || !EventCodePattern.test(code)) throw bad();
  if (sort === "code") {
    if (v.length !== 2) throw bad();
    return { code };
  }
  if (v.length !== 3 || !Number.isSafeInteger(v[1]) || v[1] < 0) throw bad();
  return { count: v[1], code };
}

/** The code as the path gives it (Elysia has decoded it); what ingest could never record names no event (404). */
function pathCode(raw: string | undefined): string {
  if (!raw || !EventCodePattern.test(raw)) throw notFound("event");
  return raw;
}

// ---- reading ------------------------------------------------------------------------------------

/**
 * Every code the app recorded (its counters) and every code its owner declared (0 when never recorded),
 * keyset-paginated: by count (most first, then code) or by code. Reads the counters, never raw events.
 */
export async function listEvents(ctx: CoreContext, actor: Actor, appId: number, q: { sort?: string; limit?: string; cursor?: string }) {
  await loadOwnApp(ctx, actor, appId);
  const sort = (q.sort ?? "count") as Sort;
  if (sort !== "count" && sort !== "code") throw badRequest("sort must be count or code");
  const limit = pageLimit(q.limit, 1000, 100);

  const s = ctx.db
    .select({ code: appEventStats.code, count: appEventStats.count, devices: appEventStats.devices, firstAt: appEventStats.firstAt, lastAt: appEventStats.lastAt })
    .from(appEventStats)
    .where(eq(appEventStats.appId, appId))
    .as("s");
  const d = ctx.db
    .select({ code: appEventDefinitions.code, name: appEventDefinitions.name, description: appEventDefinitions.description })
    .from(appEventDefinitions)
    .where(eq(appEventDefinitions.appId, appId))
    .as("d");
  // byte order, whatever the database's locale: pages then follow each other the same way everywhere
  const code = sql<string>`coalesce(${s.code}, ${d.code}) collate "C"`;
  const n = sql<number>`coalesce(${s.count}, 0)`;
  const where: SQL[] = [];
  if (q.cursor) {
    const c = parseCursor(sort, q.cursor);
    where.push(sort === "code" ? sql`${code} > ${c.code}` : sql`(${n} < ${c.count} or (${n} = ${c.count} and ${code} > ${c.code}))`);
  }
  const rows = await ctx.db
    .select({
      code: sql<string>`coalesce(${s.code}, ${d.code})`,
      name: d.name,
      description: d.description,
      defined: sql<boolean>`${d.code} is not null`,
      count: n.mapWith(Number),
      devices: sql<number>`coalesce(${s.devices}, 0)`.mapWith(Number),
      firstAt: s.firstAt,
      lastAt: s.lastAt,
    })
    .from(s)
    .fullJoin(d, eq(s.code, d.code))
    .where(where.length ? and(...where) : undefined)
    .orderBy(...(sort === "code" ? [asc(code)] : [desc(n), asc(code)]))
    .limit(limit + 1);
  const page = rows.slice(0, limit) as Entry[];
  return { items: page.map(view), next_cursor: rows.length > limit ? cursorOf(sort, page[page.length - 1]!) : null };
}

/** One code: its counters and declaration; 404 when the app neither recorded nor declared it. */
async function loadEntry(ctx: CoreContext, appId: number, code: string): Promise<Entry | null> {
  const [[st], [def]] = await Promise.all([
    ctx.db.select().from(appEventStats).where(and(eq(appEventStats.appId, appId), eq(appEventStats.code, code))),
    ctx.db.select().from(appEventDefinitions).where(and(eq(appEventDefinitions.appId, appId), eq(appEventDefinitions.code, code))),
  ]);
  if (!st && !def) return null;
  return {
    code,
    name: def?.name ?? null,
    description: def?.description ?? null,
    defined: !!def,
    count: st?.count ?? 0,
    devices: st?.devices ?? 0,
    firstAt: st?.firstAt ?? null,
    lastAt: st?.lastAt ?? null,
  };
}

export async function getEvent(ctx: CoreContext, actor: Actor, appId: number, rawCode: string | undefined) {
  await loadOwnApp(ctx, actor, appId);
  const entry = await loadEntry(ctx, appId, pathCode(rawCode));
  if (!entry) throw notFound("event");
  return view(entry);
}

// ---- declarations -------------------------------------------------------------------------------

export async function declareEvent(ctx: CoreContext, actor: Actor, appId: number, input: { code: string; name?: string | null; description?: string | null }) {
  await loadOwnApp(ctx, actor, appId);
  const code = input.code;
  if (isBuiltinEvent(code)) throw badRequest(`code ${code} is built in (install, reg, dep/depN, purchase, subscribe, onscreen, background, closed); declare custom codes only`);
  try {
    await ctx.db.transaction(async (tx) => {
      // concurrent declarations of one app queue here, so the cap holds; NO KEY UPDATE leaves ingest's
      // foreign-key checks on the app row (KEY SHARE) unblocked
      await tx.select({ id: apps.id }).from(apps).where(eq(apps.id, appId)).for("no key update");
      const [{ n }] = (await tx.select({ n: count() }).from(appEventDefinitions).where(eq(appEventDefinitions.appId, appId))) as [{ n: number }];
      if (Number(n) >= MAX_DEFINITIONS_PER_APP) throw badRequest(`an app declares at most ${MAX_DEFINITIONS_PER_APP} event codes`);
      const at = ctx.now();
      await tx.insert(appEventDefinitions).values({ appId, code, name: input.name ?? null, description: input.description ?? null, createdAt: at, updatedAt: at });
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`event ${code} is already declared`);
    throw err;
  }
  return view((await loadEntry(ctx, appId, code))!);
}

export async function updateEvent(ctx: CoreContext, actor: Actor, appId: number, rawCode: string | undefined, input: { name?: string | null; description?: string | null }) {
  await loadOwnApp(ctx, actor, appId);
  const code = pathCode(rawCode);
  const set: Partial<typeof appEventDefinitions.$inferInsert> = { updatedAt: ctx.now() };
  if (input.name !== undefined) set.name = input.name;
  if (input.description !== undefined) set.description = input.description;
  const [row] = await ctx.db
    .update(appEventDefinitions)
    .set(set)
    .where(and(eq(appEventDefinitions.appId, appId), eq(appEventDefinitions.code, code)))
    .returning({ code: appEventDefinitions.code });
  if (!row) throw notFound("event declaration");
  return view((await loadEntry(ctx, appId, code))!);
}

/** Removes the declaration; the counters stay (they are the app's history, not the declaration's). */
export async function deleteEvent(ctx: CoreContext, actor: Actor, appId: number, rawCode: string | undefined) {
  await loadOwnApp(ctx, actor, appId);
  const code = pathCode(rawCode);
  const [row] = await ctx.db
    .delete(appEventDefinitions)
    .where(and(eq(appEventDefinitions.appId, appId), eq(appEventDefinitions.code, code)))
    .returning({ code: appEventDefinitions.code });
  if (!row) throw notFound("event declaration");
}
