import { and, eq } from "drizzle-orm";
import { pushPacks, packLanguages, packScheduledPushes, packEventPushes } from "@pushstack/schema";
import { forbidden, notFound } from "@pushstack/http";
import type { Actor, CoreContext } from "../../context";

export type PackRow = typeof pushPacks.$inferSelect;

/**
 * Who may see a pack: its owner; everybody for a published system pack; administrators for every
 * system pack. Anything else is "not found", so drafts and other accounts' packs do not leak.
 */
export function canSee(actor: Actor, p: PackRow): boolean {
  if (p.isSystem) return p.isPublished || actor.isAdmin;
  return p.userId === actor.userId;
}

export async function visiblePack(ctx: CoreContext, actor: Actor, packId: number): Promise<PackRow> {
  const [p] = await ctx.db.select().from(pushPacks).where(eq(pushPacks.id, packId));
  if (!p || !canSee(actor, p)) throw notFound("pack");
  return p;
}

/**
 * Packs are changed through two doors with the same paths: `/admin/push-packs` for system packs
 * (administrators) and `/push-packs` for the caller's own packs. Through the wrong door a system
 * pack answers 403 and another account's pack 404.
 */
export type Door = "admin" | "own";

export async function editablePack(ctx: CoreContext, actor: Actor, packId: number, door: Door): Promise<PackRow> {
  const [p] = await ctx.db.select().from(pushPacks).where(eq(pushPacks.id, packId));
  if (door === "admin") {
    if (!p || !p.isSystem) throw notFound("pack");
    return p;
  }
  if (!p || !canSee(actor, p)) throw notFound("pack");
  if (p.isSystem) throw forbidden("system packs can only be changed by administrators");
  if (actor.appId !== null) throw forbidden(`this API key is limited to app ${actor.appId}`);
  return p;
}

export async function packLanguage(ctx: CoreContext, packId: number, langId: number) {
  const [l] = await ctx.db.select().from(packLanguages).where(and(eq(packLanguages.id, langId), eq(packLanguages.packId, packId)));
  if (!l) throw notFound("language");
  return l;
}

export async function scheduledItem(ctx: CoreContext, packId: number, itemId: number) {
  const [row] = await ctx.db
    .select({ item: packScheduledPushes })
    .from(packScheduledPushes)
    .innerJoin(packLanguages, eq(packLanguages.id, packScheduledPushes.languageId))
    .where(and(eq(packScheduledPushes.id, itemId), eq(packLanguages.packId, packId)));
  if (!row) throw notFound("push");
  return row.item;
}

export async function eventItem(ctx: CoreContext, packId: number, itemId: number) {
  const [row] = await ctx.db
    .select({ item: packEventPushes })
    .from(packEventPushes)
    .innerJoin(packLanguages, eq(packLanguages.id, packEventPushes.languageId))
    .where(and(eq(packEventPushes.id, itemId), eq(packLanguages.packId, packId)));
  if (!row) throw notFound("push");
  return row.item;
}
