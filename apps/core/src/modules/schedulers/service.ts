import { and, desc, eq, lt, type SQL } from "drizzle-orm";
import type { Static } from "@sinclair/typebox";
import { devices, pushTemplates, schedulers, sends, CreateSchedulerBody, UpdateSchedulerBody, SCHEDULER_FILTER_KEYS, SCHEDULER_TYPES, type SchedulerFilters, type SchedulerObject, type SchedulerType } from "@pushstack/schema";
import { badRequest, conflict, forbidden, notFound } from "@pushstack/http";
import { idCursor, pageLimit, queryId } from "../../lib/params";
import type { Actor, CoreContext } from "../../context";
import type { Db } from "../../db";
import { loadOwnApp } from "../apps/service";
import { requireFeature } from "../billing/entitlements";
import { sendingAllowed } from "../billing/limits";
import { checkDeviceFilters } from "../devices/service";
import { createSend, kickSends, type SchedulerAudience } from "../sending";

type SchedulerRow = typeof schedulers.$inferSelect;

/** A `once` scheduler may be set at most this far ahead. */
const MAX_AHEAD_MS = 366 * 24 * 3600_000;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

export interface ScheduleFields {
  send_at?: string;
  days_of_week?: number[];
  send_time?: string;
  event_code?: string;
  delay_minutes?: number;
}
export interface CreateInput extends ScheduleFields {
  app_id: number;
  push_id: number;
  name: string;
  type: SchedulerType;
  filters?: SchedulerFilters;
}
export interface UpdateInput extends ScheduleFields {
  name?: string;
  push_id?: number;
  filters?: SchedulerFilters;
  status?: "active" | "paused";
}

/** Which schedule fields each type takes; a field given to another type is a 400 (it would be silently ignored). */
const FIELDS: Record<SchedulerType, (keyof ScheduleFields)[]> = {
  instant: [],
  once: ["send_at"],
  weekly: ["days_of_week", "send_time"],
  event: ["event_code", "delay_minutes"],
};
const REQUIRED: Record<SchedulerType, (keyof ScheduleFields)[]> = { instant: [], once: ["send_at"], weekly: ["days_of_week", "send_time"], event: ["event_code"] };

// ---- views -----------------------------------------------------------------------------------

/** Weekday as packs store it: 0 = Monday .. 6 = Sunday. */
const dayOfWeek = (d: Date) => (d.getUTCDay() + 6) % 7;

/** The next weekly slot strictly after `now` (a slot whose minute has begun was ticked already). */
export function nextWeekly(days: number[], sendTime: string, now: Date): Date | null {
  if (!days.length) return null;
  const [h, m] = sendTime.split(":").map(Number) as [number, number];
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  for (let i = 0; i <= 7; i++) {
    const at = new Date(midnight + i * 86_400_000 + (h * 60 + m) * 60_000);
    if (at > now && days.includes(dayOfWeek(at))) return at;
  }
  return null;
}

function nextRun(r: SchedulerRow, now: Date): Date | null {
  if (r.status !== "active") return null;
  if (r.kind === "once") return r.sendAt;
  if (r.kind === "weekly" && r.daysOfWeek && r.sendTime) return nextWeekly(r.daysOfWeek, r.sendTime, now);
  return null;
}

export function schedulerView(r: SchedulerRow, now: Date): Static<typeof SchedulerObject> {
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return {
    id: r.id,
    app_id: r.appId,
    push_id: r.pushId,
    name: r.name,
    type: r.kind,
    status: r.status,
    send_at: iso(r.sendAt),
    days_of_week: r.daysOfWeek ?? null,
    send_time: r.sendTime ? r.sendTime.slice(0, 5) : null,
    event_code: r.eventCode,
    delay_minutes: r.delayMinutes,
    // stored only after checkDeviceFilters: platform is one of the schema's literals
    filters: (r.filters ?? {}) as Static<typeof SchedulerObject>["filters"],
    last_sent_at: iso(r.lastSentAt),
    next_run_at: iso(nextRun(r, now)),
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

// ---- checks ----------------------------------------------------------------------------------

/** The caller's scheduler (and inside an app-scoped key's app): another account's is "not found". */
async function loadOwnScheduler(ctx: CoreContext, actor: Actor, id: number): Promise<SchedulerRow> {
  const [row] = await ctx.db
    .select()
    .from(schedulers)
    .where(and(eq(schedulers.id, id), eq(schedulers.userId, actor.userId), actor.appId !== null ? eq(schedulers.appId, actor.appId) : undefined));
  if (!row) throw notFound("scheduler");
  return row;
}

/** The push template to send: the caller's (404 otherwise) and of the scheduler's app (400 otherwise). */
async function checkTemplate(ctx: CoreContext, actor: Actor, appId: number, pushId: number) {
  const [tpl] = await ctx.db
    .select({ id: pushTemplates.id, appId: pushTemplates.appId })
    .from(pushTemplates)
    .where(and(eq(pushTemplates.id, pushId), eq(pushTemplates.userId, actor.userId)));
  // an app-scoped key does not learn about the account's other apps' pushes
  if (!tpl || (actor.appId !== null && tpl.appId !== actor.appId)) throw notFound("push");
  if (tpl.appId !== appId) throw badRequest(`push_id must be a push of app ${appId}; push ${pushId} belongs to app ${tpl.appId}`);
}

function checkFields(type: SchedulerType, f: ScheduleFields) {
  for (const k of Object.keys(FIELDS) as SchedulerType[]) {
    for (const field of FIELDS[k]) {
      if (f[field] !== undefined && !FIELDS[type].includes(field)) throw badRequest(`${field} does not apply to ${type} schedulers`);
    }
  }
}

function parseSendAt(raw: string, now: Date): Date {
  const d = new Date(raw);
  if (!ISO.test(raw) || Number.isNaN(d.getTime())) throw badRequest("send_at must be an ISO 8601 date-time with a time zone, e.g. 2025-01-31T18:00:00Z");
  if (d.getTime() <= now.getTime()) throw badRequest("send_at must be in the future");
  if (d.getTime() > now.getTime() + MAX_AHEAD_MS) throw badRequest("send_at must be at most a year ahead");
  return d;
}

const CREATE_KEYS = Object.keys(CreateSchedulerBody.properties);
const UPDATE_KEYS = Object.keys(UpdateSchedulerBody.properties);

/** A mistyped field is refused, not ignored: `filter` for `filters` would otherwise send to the whole audience. */
function rejectUnknown(input: object, known: string[]) {
  for (const k of Object.keys(input)) if (!known.includes(k)) throw badRequest(`${k.slice(0, 64)} is not a scheduler field`);
}

/** Validated, normalised filters; an unknown key is refused (ignoring it would widen the audience). */
function checkFilters(f: SchedulerFilters): SchedulerFilters {
  for (const k of Object.keys(f)) {
    if (!(SCHEDULER_FILTER_KEYS as readonly string[]).includes(k)) throw badRequest(`filters.${k.slice(0, 64)} is not a filter: use ${SCHEDULER_FILTER_KEYS.join(", ")} (tags for custom tags)`);
  }
  return checkDeviceFilters(f, "filters.");
}

function trimmedName(name: string): string {
  const n = name.trim();
  if (!n) throw badRequest("name must not be empty");
  return n;
}

/** An instant or manual send needs an app and an account that may send now. */
function assertCanSend(actor: Actor, app: { archived: boolean }) {
  if (app.archived) throw forbidden("app is archived: unarchive it to send");
  if (!sendingAllowed(actor.subscriptionStatus)) throw forbidden("sending is paused while the account is past due: top up the balance to resume");
}

const audienceOf = (r: SchedulerRow, deviceId?: number): SchedulerAudience =>
  deviceId !== undefined
    ? // a test send reaches its device whatever the filters
      { scheduler_id: r.id, template_id: r.pushId, filters: {}, device_id: deviceId }
    : { scheduler_id: r.id, template_id: r.pushId, filters: r.filters ?? {} };

// ---- endpoints -------------------------------------------------------------------------------

export async function createScheduler(ctx: CoreContext, actor: Actor, input: CreateInput) {
  rejectUnknown(input, CREATE_KEYS);
  const app = await loadOwnApp(ctx, actor, input.app_id);
  if (app.archived) throw forbidden("app is archived: unarchive it to add schedulers");
  const type = input.type;
  checkFields(type, input);
  for (const field of REQUIRED[type]) if (input[field] === undefined) throw badRequest(`${field} is required for ${type} schedulers`);
  if (type === "event") requireFeature(actor, "event_triggers");
  if (type === "instant") assertCanSend(actor, app);
  const name = trimmedName(input.name);
  await checkTemplate(ctx, actor, app.id, input.push_id);
  const filters = checkFilters(input.filters ?? {});
  const now = ctx.now();
  const sendAt = input.send_at !== undefined ? parseSendAt(input.send_at, now) : null;
  const row = await ctx.db.transaction(async (tx) => {
    const [r] = await tx
      .insert(schedulers)
      .values({
        userId: actor.userId,
        appId: app.id,
        pushId: input.push_id,
        name,
        kind: type,
        // an instant scheduler has sent once it exists
        status: type === "instant" ? "completed" : "active",
        sendAt,
        daysOfWeek: input.days_of_week ? [...input.days_of_week].sort((a, b) => a - b) : null,
        sendTime: input.send_time ?? null,
        eventCode: input.event_code ?? null,
        delayMinutes: input.delay_minutes ?? 0,
        filters,
        lastSentAt: type === "instant" ? now : null,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    if (type === "instant") await sendOnce(tx, r!, `sched-i:${r!.id}`, now);
    return r!;
  });
  if (type === "instant") kickSends(ctx);
  return schedulerView(row, now);
}

function sendOnce(tx: Db, r: SchedulerRow, key: string, now: Date, deviceId?: number) {
  return createSend(tx, {
    key,
    appId: r.appId,
    source: "scheduler",
    sourceId: r.id,
    packId: null,
    templateId: r.pushId,
    audience: audienceOf(r, deviceId),
    renderAt: now,
  });
}

export interface ListQuery {
  app_id?: string;
  type?: string;
  status?: string;
  limit?: string;
  cursor?: string;
}

const cursor = idCursor("s");

/** The caller's schedulers, newest first, keyset-paginated; filters app_id, type, status. */
export async function listSchedulers(ctx: CoreContext, actor: Actor, q: ListQuery) {
  const where: (SQL | undefined)[] = [eq(schedulers.userId, actor.userId)];
  if (actor.appId !== null) where.push(eq(schedulers.appId, actor.appId));
  if (q.app_id !== undefined && q.app_id !== "") {
    const app = await loadOwnApp(ctx, actor, queryId(q.app_id, "app_id"));
    where.push(eq(schedulers.appId, app.id));
  }
  if (q.type !== undefined && q.type !== "") {
    if (!(SCHEDULER_TYPES as readonly string[]).includes(q.type)) throw badRequest(`type must be one of ${SCHEDULER_TYPES.join(", ")}`);
    where.push(eq(schedulers.kind, q.type));
  }
  if (q.status !== undefined && q.status !== "") {
    if (!["active", "paused", "completed", "missed"].includes(q.status)) throw badRequest("status must be one of active, paused, completed, missed");
    where.push(eq(schedulers.status, q.status));
  }
  const limit = pageLimit(q.limit, 100);
  if (q.cursor) where.push(lt(schedulers.id, cursor.decode(q.cursor)));
  const rows = await ctx.db
    .select()
    .from(schedulers)
    .where(and(...where))
    .orderBy(desc(schedulers.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const now = ctx.now();
  return { items: page.map((r) => schedulerView(r, now)), next_cursor: rows.length > limit ? cursor.encode(page[page.length - 1]!.id) : null };
}

export async function getScheduler(ctx: CoreContext, actor: Actor, id: number) {
  return schedulerView(await loadOwnScheduler(ctx, actor, id), ctx.now());
}

export async function updateScheduler(ctx: CoreContext, actor: Actor, id: number, input: UpdateInput) {
  const sc = await loadOwnScheduler(ctx, actor, id);
  rejectUnknown(input, UPDATE_KEYS);
  const type = sc.kind as SchedulerType;
  const onlyPause = Object.keys(input).every((k) => k === "status") && input.status === "paused";
  // a downgraded owner may still pause (and delete) event schedulers, nothing else
  if (type === "event" && !onlyPause) requireFeature(actor, "event_triggers");
  checkFields(type, input);
  const now = ctx.now();
  const patch: Partial<typeof schedulers.$inferInsert> = { updatedAt: now };
  if (input.name !== undefined) patch.name = trimmedName(input.name);
  if (input.push_id !== undefined) {
    await checkTemplate(ctx, actor, sc.appId, input.push_id);
    patch.pushId = input.push_id;
  }
  if (input.filters !== undefined) patch.filters = checkFilters(input.filters);
  if (input.send_at !== undefined) patch.sendAt = parseSendAt(input.send_at, now);
  if (input.days_of_week !== undefined) patch.daysOfWeek = [...input.days_of_week].sort((a, b) => a - b);
  if (input.send_time !== undefined) patch.sendTime = input.send_time;
  if (input.event_code !== undefined) patch.eventCode = input.event_code;
  if (input.delay_minutes !== undefined) patch.delayMinutes = input.delay_minutes;
  let status = input.status;
  if (sc.status === "completed" || sc.status === "missed") {
    // a `once` scheduler is re-armed by a new send_at; otherwise a completed scheduler stays completed
    if (type === "once" && patch.sendAt) status ??= "active";
    else if (status !== undefined) throw conflict(`the scheduler has ${sc.status} (${type === "once" ? "give a new send_at to send it again" : "create another one or send it again with POST /api/v3/schedulers/:id/send"})`);
  }
  if (status === "active" && type === "once" && (patch.sendAt ?? sc.sendAt!).getTime() <= now.getTime()) {
    throw badRequest("send_at is in the past: give a new send_at to resume");
  }
  if (status !== undefined) patch.status = status;
  const [row] = await ctx.db.update(schedulers).set(patch).where(eq(schedulers.id, sc.id)).returning();
  return schedulerView(row!, now);
}

/** Deleting a scheduler drops its pending event sends (foreign key cascade); a send of it still fanning out is cancelled. */
export async function deleteScheduler(ctx: CoreContext, actor: Actor, id: number) {
  const sc = await loadOwnScheduler(ctx, actor, id);
  await ctx.db.delete(schedulers).where(eq(schedulers.id, sc.id));
}

/**
 * Sends the scheduler's template now, once, whatever its type ("send now"): to its filtered audience,
 * or with `device_id` to that device only (a test send). `idempotencyKey` (the Idempotency-Key header)
 * makes a retried request return the first send instead of sending again.
 */
export async function sendSchedulerNow(ctx: CoreContext, actor: Actor, id: number, input: { device_id?: number }, idempotencyKey: string | null) {
  const sc = await loadOwnScheduler(ctx, actor, id);
  if (sc.status === "paused") throw conflict("the scheduler is paused: resume it (status active) to send");
  const app = await loadOwnApp(ctx, actor, sc.appId);
  assertCanSend(actor, app);
  if (idempotencyKey !== null && (idempotencyKey.length < 1 || idempotencyKey.length > 255)) throw badRequest("Idempotency-Key must be 1 to 255 characters");
  if (input.device_id !== undefined) {
    const [d] = await ctx.db
      .select({ id: devices.id })
      .from(devices)
      .where(and(eq(devices.id, input.device_id), eq(devices.appId, sc.appId)));
    if (!d) throw notFound("device");
  }
  const now = ctx.now();
  const key = `sched-now:${sc.id}:${idempotencyKey ?? crypto.randomUUID()}`;
  const r = await ctx.db.transaction(async (tx) => {
    const sendId = await sendOnce(tx, sc, key, now, input.device_id);
    if (sendId === null) {
      const [prev] = await tx.select({ id: sends.id }).from(sends).where(eq(sends.sendKey, key));
      return { sendId: prev!.id, created: false, row: sc };
    }
    const [row] = await tx.update(schedulers).set({ lastSentAt: now }).where(eq(schedulers.id, sc.id)).returning();
    return { sendId, created: true, row: row! };
  });
  if (r.created) kickSends(ctx);
  return { created: r.created, body: { send_id: r.sendId, scheduler: schedulerView(r.row, now) } };
}
