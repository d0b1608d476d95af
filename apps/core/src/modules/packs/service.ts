import { and, asc, eq, or } from "drizzle-orm";
import { pushPacks, packLanguages, packScheduledPushes, packEventPushes, appPushPacks } from "@pushstack/schema";
import { badRequest, conflict, forbidden, notFound } from "@pushstack/http";
import { validateTemplate } from "@pushstack/templating";
import type { Actor, CoreContext } from "../../context";
import { isUniqueViolation } from "../../lib/db-errors";
import { loadOwnApp } from "../apps/service";
import { visiblePack, editablePack, packLanguage, scheduledItem, eventItem, type Door } from "./access";
import { packView, languageView, scheduledView, eventView } from "./views";

// ---- reading -------------------------------------------------------------------------------

export async function listPacks(ctx: CoreContext, actor: Actor) {
  const rows = await ctx.db
    .select()
    .from(pushPacks)
    .where(or(eq(pushPacks.userId, actor.userId), and(eq(pushPacks.isSystem, true), eq(pushPacks.isPublished, true))))
    .orderBy(asc(pushPacks.id));
  return rows.map(packView);
}

export async function getPack(ctx: CoreContext, actor: Actor, packId: number) {
  return packView(await visiblePack(ctx, actor, packId));
}

export async function listLanguages(ctx: CoreContext, actor: Actor, packId: number) {
  await visiblePack(ctx, actor, packId);
  const rows = await ctx.db.select().from(packLanguages).where(eq(packLanguages.packId, packId)).orderBy(asc(packLanguages.id));
  return rows.map(languageView);
}

export async function listScheduled(ctx: CoreContext, actor: Actor, packId: number, langId: number) {
  const pack = await visiblePack(ctx, actor, packId);
  await packLanguage(ctx, packId, langId);
  const rows = await ctx.db
    .select()
    .from(packScheduledPushes)
    .where(eq(packScheduledPushes.languageId, langId))
    .orderBy(asc(packScheduledPushes.dayOfWeek), asc(packScheduledPushes.sendTime), asc(packScheduledPushes.id));
  return rows.map((r) => scheduledView(r, pack.isSystem && !actor.isAdmin));
}

export async function listEvents(ctx: CoreContext, actor: Actor, packId: number, langId: number) {
  const pack = await visiblePack(ctx, actor, packId);
  await packLanguage(ctx, packId, langId);
  const rows = await ctx.db.select().from(packEventPushes).where(eq(packEventPushes.languageId, langId)).orderBy(asc(packEventPushes.id));
  return rows.map((r) => eventView(r, pack.isSystem && !actor.isAdmin));
}

export async function adminListPacks(ctx: CoreContext) {
  const rows = await ctx.db.select().from(pushPacks).where(eq(pushPacks.isSystem, true)).orderBy(asc(pushPacks.id));
  return rows.map(packView);
}

// ---- packs ---------------------------------------------------------------------------------

export async function createPack(ctx: CoreContext, actor: Actor, door: Door, input: { name: string; fallback_language: string }) {
  if (door === "own") await editableOwnGuard(actor);
  const system = door === "admin";
  const [row] = await ctx.db
    .insert(pushPacks)
    .values({
      name: input.name.trim(),
      fallbackLanguage: input.fallback_language,
      isSystem: system,
      // a system pack starts as a draft; a user's own pack is always live
      isPublished: !system,
      userId: system ? null : actor.userId,
    })
    .returning();
  return packView(row!);
}

async function editableOwnGuard(actor: Actor) {
  if (actor.appId !== null) throw forbidden(`this API key is limited to app ${actor.appId}`);
}

export async function updatePack(ctx: CoreContext, actor: Actor, door: Door, packId: number, input: { name: string; fallback_language: string }) {
  await editablePack(ctx, actor, packId, door);
  const [row] = await ctx.db
    .update(pushPacks)
    .set({ name: input.name.trim(), fallbackLanguage: input.fallback_language, updatedAt: ctx.now() })
    .where(eq(pushPacks.id, packId))
    .returning();
  return packView(row!);
}

export async function deletePack(ctx: CoreContext, actor: Actor, door: Door, packId: number) {
  await editablePack(ctx, actor, packId, door);
  await ctx.db.delete(pushPacks).where(eq(pushPacks.id, packId));
}

export async function publishPack(ctx: CoreContext, packId: number, isPublished: boolean) {
  const [row] = await ctx.db
    .update(pushPacks)
    .set({ isPublished, updatedAt: ctx.now() })
    .where(and(eq(pushPacks.id, packId), eq(pushPacks.isSystem, true)))
    .returning();
  if (!row) throw notFound("pack");
  return packView(row);
}

// ---- languages -----------------------------------------------------------------------------

export async function addLanguage(ctx: CoreContext, actor: Actor, door: Door, packId: number, code: string) {
  await editablePack(ctx, actor, packId, door);
  try {
    const [row] = await ctx.db.insert(packLanguages).values({ packId, languageCode: code }).returning();
    await touch(ctx, packId);
    return languageView(row!);
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(`language ${code} already exists in this pack`);
    throw e;
  }
}

/** Deleting a language deletes its scheduled and event pushes (foreign keys cascade). */
export async function deleteLanguage(ctx: CoreContext, actor: Actor, door: Door, packId: number, langId: number) {
  await editablePack(ctx, actor, packId, door);
  await packLanguage(ctx, packId, langId);
  await ctx.db.delete(packLanguages).where(eq(packLanguages.id, langId));
  await touch(ctx, packId);
}

const touch = (ctx: CoreContext, packId: number) => ctx.db.update(pushPacks).set({ updatedAt: ctx.now() }).where(eq(pushPacks.id, packId));

// ---- pushes --------------------------------------------------------------------------------

export interface ContentInput {
  title: string;
  body?: string | null;
  icon_url?: string | null;
  click_url?: string | null;
  image_url?: string | null;
  audience_tag?: string | null;
}

/** Titles and bodies must compile as templates: the message names the field and the position. */
export function checkTemplates(input: ContentInput) {
  if (!input.title.trim()) throw badRequest("title must not be empty");
  for (const field of ["title", "body"] as const) {
    const text = input[field];
    if (typeof text !== "string") continue;
    const r = validateTemplate(text);
    if (!r.ok) throw badRequest(`${field}: ${r.error}`);
  }
}

const contentColumns = (i: ContentInput) => ({
  title: i.title,
  body: i.body ?? null,
  iconUrl: i.icon_url ?? null,
  clickUrl: i.click_url ?? null,
  imageUrl: i.image_url ?? null,
  audienceTag: i.audience_tag ?? null,
});

export type ScheduledInput = ContentInput & { day_of_week: number; send_time: string };
export type EventInput = ContentInput & { event_code: string; delay_minutes?: number };

export async function createScheduled(ctx: CoreContext, actor: Actor, door: Door, packId: number, langId: number, input: ScheduledInput) {
  await editablePack(ctx, actor, packId, door);
  await packLanguage(ctx, packId, langId);
  checkTemplates(input);
  const [row] = await ctx.db
    .insert(packScheduledPushes)
    .values({ languageId: langId, dayOfWeek: input.day_of_week, sendTime: input.send_time, ...contentColumns(input) })
    .returning();
  return scheduledView(row!);
}

export async function updateScheduled(ctx: CoreContext, actor: Actor, door: Door, packId: number, itemId: number, input: ScheduledInput) {
  await editablePack(ctx, actor, packId, door);
  await scheduledItem(ctx, packId, itemId);
  checkTemplates(input);
  const [row] = await ctx.db
    .update(packScheduledPushes)
    .set({ dayOfWeek: input.day_of_week, sendTime: input.send_time, ...contentColumns(input), updatedAt: ctx.now() })
    .where(eq(packScheduledPushes.id, itemId))
    .returning();
  return scheduledView(row!);
}

export async function deleteScheduled(ctx: CoreContext, actor: Actor, door: Door, packId: number, itemId: number) {
  await editablePack(ctx, actor, packId, door);
  await scheduledItem(ctx, packId, itemId);
  await ctx.db.delete(packScheduledPushes).where(eq(packScheduledPushes.id, itemId));
}

export async function createEvent(ctx: CoreContext, actor: Actor, door: Door, packId: number, langId: number, input: EventInput) {
  await editablePack(ctx, actor, packId, door);
  await packLanguage(ctx, packId, langId);
  checkTemplates(input);
  const [row] = await ctx.db
    .insert(packEventPushes)
    .values({ languageId: langId, eventCode: input.event_code, delayMinutes: input.delay_minutes ?? 0, ...contentColumns(input) })
    .returning();
  return eventView(row!);
}

export async function updateEvent(ctx: CoreContext, actor: Actor, door: Door, packId: number, itemId: number, input: EventInput) {
  await editablePack(ctx, actor, packId, door);
  await eventItem(ctx, packId, itemId);
  checkTemplates(input);
  const [row] = await ctx.db
    .update(packEventPushes)
    .set({ eventCode: input.event_code, delayMinutes: input.delay_minutes ?? 0, ...contentColumns(input), updatedAt: ctx.now() })
    .where(eq(packEventPushes.id, itemId))
    .returning();
  return eventView(row!);
}

export async function deleteEvent(ctx: CoreContext, actor: Actor, door: Door, packId: number, itemId: number) {
  await editablePack(ctx, actor, packId, door);
  await eventItem(ctx, packId, itemId);
  await ctx.db.delete(packEventPushes).where(eq(packEventPushes.id, itemId));
}

// ---- attaching -----------------------------------------------------------------------------

const attachmentView = (p: typeof pushPacks.$inferSelect, appId: number, attachedAt: Date) => ({
  ...packView(p),
  app_id: appId,
  attached_at: attachedAt.toISOString(),
});

export async function listAttached(ctx: CoreContext, actor: Actor, appId: number) {
  await loadOwnApp(ctx, actor, appId);
  const rows = await ctx.db
    .select({ pack: pushPacks, attachedAt: appPushPacks.attachedAt })
    .from(appPushPacks)
    .innerJoin(pushPacks, eq(pushPacks.id, appPushPacks.packId))
    .where(eq(appPushPacks.appId, appId))
    .orderBy(asc(appPushPacks.attachedAt), asc(pushPacks.id));
  return rows.map((r) => attachmentView(r.pack, appId, r.attachedAt));
}

/**
 * Attach a pack the caller may use (own, or a published system pack) to an own app. A pack the caller
 * may not use (another account's, or a draft) answers 404 "pack not found": it does not exist for them.
 * Attaching twice is harmless: the second call answers 200 with the existing attachment.
 */
export async function attachPack(ctx: CoreContext, actor: Actor, appId: number, packId: number) {
  await loadOwnApp(ctx, actor, appId);
  const [pack] = await ctx.db.select().from(pushPacks).where(eq(pushPacks.id, packId));
  const usable = pack && (pack.isSystem ? pack.isPublished : pack.userId === actor.userId);
  if (!pack || !usable) throw notFound("pack");
  const inserted = await ctx.db.insert(appPushPacks).values({ appId, packId }).onConflictDoNothing().returning();
  const [row] = inserted.length ? inserted : await ctx.db.select().from(appPushPacks).where(and(eq(appPushPacks.appId, appId), eq(appPushPacks.packId, packId)));
  return { created: inserted.length > 0, attachment: attachmentView(pack, appId, row!.attachedAt) };
}

export async function detachPack(ctx: CoreContext, actor: Actor, appId: number, packId: number) {
  await loadOwnApp(ctx, actor, appId);
  const gone = await ctx.db.delete(appPushPacks).where(and(eq(appPushPacks.appId, appId), eq(appPushPacks.packId, packId))).returning();
  if (!gone.length) throw notFound("pack attachment");
}

