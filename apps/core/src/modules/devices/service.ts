import { and, asc, eq, gt, or, sql, type SQL } from "drizzle-orm";
import { apps, devices, checkDeviceInfo, normalizeLanguage, type RegisterReply, type RegisterRequest, type SchedulerFilters } from "@pushstack/schema";
import { AppError, badRequest, forbidden, notFound } from "@pushstack/http";
import type { Actor, CoreContext } from "../../context";
import { loadOwnApp } from "../apps/service";
import { findOrCreateDevice, mergeTags, type DeviceRow, type NewDevice } from "./store";
import { decodeCursor, deviceView, encodeCursor } from "./views";

export interface DeviceFields {
  platform?: string | null;
  transport_type?: string | null;
  transport_token?: unknown;
  language?: string | null;
  country?: string | null;
  tz_sec?: number | null;
  model?: string | null;
  tags?: Record<string, string> | null;
}

/** Validated, normalised column values of a server-side registration or update (only what was given). */
function columns(input: DeviceFields, current?: DeviceRow): Partial<NewDevice> {
  const platform = input.platform === undefined ? (current?.platform ?? null) : input.platform;
  const checked = checkDeviceInfo({ ...input, platform });
  if (!checked.ok) throw badRequest(checked.error);
  const out: Partial<NewDevice> = {};
  if (input.platform !== undefined) out.platform = input.platform;
  if (checked.transportType !== undefined) out.transportType = checked.transportType;
  if (checked.transportToken !== undefined) {
    out.transportToken = checked.transportToken;
    out.tokenInvalid = false;
  }
  if (checked.language !== undefined) out.language = checked.language;
  if (checked.country !== undefined) out.country = checked.country;
  if (input.tz_sec !== undefined) out.tzSec = input.tz_sec;
  if (input.model !== undefined) out.model = input.model;
  return out;
}

async function writableApp(ctx: CoreContext, actor: Actor, appId: number) {
  const app = await loadOwnApp(ctx, actor, appId);
  if (app.archived) throw forbidden("app is archived");
  return app;
}

/**
 * Server-side registration: the device `srv_<external_id>` of the app, created (201) or, when it
 * exists, updated with what is given (200). New devices count against the install cap.
 */
export async function registerServerDevice(ctx: CoreContext, actor: Actor, appId: number, input: DeviceFields & { external_id: string }) {
  const app = await writableApp(ctx, actor, appId);
  const externalId = input.external_id.trim();
  if (!externalId) throw badRequest("external_id is required: 1 to 255 characters");
  const values = columns(input);
  return ctx.db.transaction(async (tx) => {
    const { device, created } = await findOrCreateDevice(ctx, tx, app, `srv_${externalId}`, {
      ...values,
      externalId,
      source: "server",
      tags: filledTags(input.tags),
    });
    if (created) return { created, device: deviceView(device) };
    return { created, device: deviceView(await applyFields(tx, device, input, ctx.now())) };
  });
}

/** Server-side update of `srv_<external_id>`: 404 when it was never registered. */
export async function updateServerDevice(ctx: CoreContext, actor: Actor, appId: number, externalId: string, input: DeviceFields) {
  await writableApp(ctx, actor, appId);
  return ctx.db.transaction(async (tx) => {
    const [device] = await tx
      .select()
      .from(devices)
      .where(and(eq(devices.appId, appId), eq(devices.installToken, `srv_${externalId}`)))
      .for("update");
    if (!device) throw notFound("device");
    return deviceView(await applyFields(tx, device, input, ctx.now()));
  });
}

async function applyFields(tx: CoreContext["db"], device: DeviceRow, input: DeviceFields, now: Date): Promise<DeviceRow> {
  const patch: Record<string, unknown> = { ...columns(input, device), lastActiveAt: now };
  if (input.tags) patch.tags = mergeTags(input.tags);
  const [row] = await tx.update(devices).set(patch).where(eq(devices.id, device.id)).returning();
  return row!;
}

function filledTags(tags: Record<string, string> | null | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(tags ?? {}).filter(([, v]) => v !== ""));
}

/** The device query's audience filters (all combined with AND): the object schedulers store. */
export type DeviceFilters = SchedulerFilters;

/**
 * Validates and normalises device filters (country upper case, language as `pt-BR`; empty `events`
 * and `tags` dropped). Errors are 400s naming the field, prefixed with `prefix` (`filters.` for schedulers).
 * The schemas (DeviceQueryBody) check types and sizes first; this checks what they cannot.
 */
export function checkDeviceFilters(f: DeviceFilters, prefix = ""): DeviceFilters {
  const out: DeviceFilters = {};
  if (f.country !== undefined) {
    if (!/^[A-Za-z]{2}$/.test(f.country)) throw badRequest(`${prefix}country must be a 2-letter ISO 3166-1 code`);
    out.country = f.country.toUpperCase();
  }
  if (f.language !== undefined) {
    const lang = normalizeLanguage(f.language);
    if (!lang) throw badRequest(`${prefix}language must be a language code such as en or pt-BR`);
    out.language = lang;
  }
  if (f.platform !== undefined) {
    if (!["android", "ios", "web"].includes(f.platform)) throw badRequest(`${prefix}platform must be one of android, ios, web`);
    out.platform = f.platform;
  }
  if (f.external_id !== undefined) out.external_id = f.external_id;
  if (f.events?.length) out.events = [...new Set(f.events)];
  if (f.tags && Object.keys(f.tags).length) out.tags = f.tags;
  return out;
}

/**
 * SQL conditions on `devices` for filters already passed through checkDeviceFilters: used by the
 * device query and by the scheduler fan-out, so both select the same devices.
 */
export function deviceFilterSql(f: DeviceFilters): SQL[] {
  const where: SQL[] = [];
  if (f.country !== undefined) where.push(eq(devices.country, f.country));
  if (f.language !== undefined) {
    // "en" also finds en-US, en-GB; "pt-BR" finds exactly pt-BR
    where.push(f.language.includes("-") ? eq(devices.language, f.language) : or(eq(devices.language, f.language), sql`${devices.language} like ${f.language + "-%"}`)!);
  }
  if (f.platform !== undefined) where.push(eq(devices.platform, f.platform));
  if (f.external_id !== undefined) where.push(eq(devices.externalId, f.external_id));
  if (f.events?.length) {
    where.push(sql`${devices.events} @> ARRAY[${sql.join(f.events.map((e) => sql`${e}`), sql`, `)}]::text[]`);
  }
  if (f.tags && Object.keys(f.tags).length) where.push(sql`${devices.tags} @> ${JSON.stringify(f.tags)}::jsonb`);
  return where;
}

/** The contract's device query: filters combined with AND, keyset pagination on the device id. */
export async function queryDevices(
  ctx: CoreContext,
  actor: Actor,
  q: DeviceFilters & {
    app_id: number;
    limit?: number;
    cursor?: string | null;
  },
) {
  await loadOwnApp(ctx, actor, q.app_id);
  const where: SQL[] = [eq(devices.appId, q.app_id), ...deviceFilterSql(checkDeviceFilters(q))];
  if (q.cursor) {
    const after = decodeCursor(q.cursor);
    if (after === null) throw badRequest("cursor must be the next_cursor of a previous page");
    where.push(gt(devices.id, after));
  }
  const limit = q.limit ?? 50;
  const rows = await ctx.db
    .select()
    .from(devices)
    .where(and(...where))
    .orderBy(asc(devices.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  return { items: page.map(deviceView), next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]!.id) : null };
}

/**
 * SDK registration, asked by the edge over the bus: the device of (app, ic_token), created when new.
 * `just_created` is true for exactly one caller, however many register the same token at once.
 * Answers HTTP errors as values (the edge relays them); throws only when the database fails.
 */
export async function registerInstance(ctx: CoreContext, req: RegisterRequest): Promise<RegisterReply> {
  const [app] = await ctx.db.select({ id: apps.id, userId: apps.userId, archived: apps.archived, platform: apps.platform }).from(apps).where(eq(apps.id, req.app_id));
  if (!app) return { ok: false, status: 404, error: "app not found" };
  if (app.archived) return { ok: false, status: 403, error: "app is archived" };
  const extId = req.ext_id?.trim() || null;
  const at = new Date(req.at);
  try {
    return await ctx.db.transaction(async (tx) => {
      const { device, created } = await findOrCreateDevice(ctx, tx, app, req.ic_token, {
        externalId: extId,
        // until the SDK sends its info, the app's platform is the best guess
        platform: app.platform,
        source: "sdk",
        createdAt: at,
        lastActiveAt: at,
      });
      if (!created) {
        await tx
          .update(devices)
          .set({ ...(extId && extId !== device.externalId ? { externalId: extId } : {}), lastActiveAt: sql`greatest(${devices.lastActiveAt}, ${at.toISOString()}::timestamptz)` })
          .where(eq(devices.id, device.id));
      }
      return { ok: true as const, device_id: device.id, just_created: created };
    });
  } catch (err) {
    if (err instanceof AppError && err.status < 500) return { ok: false, status: err.status, error: err.message };
    throw err;
  }
}
