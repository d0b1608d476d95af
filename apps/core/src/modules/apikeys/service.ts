import { and, asc, eq, isNull } from "drizzle-orm";
import { apiKeys } from "@pushstack/schema";
import { adminRequired, forbidden, notFound } from "@pushstack/http";
import { requireFeature } from "../billing/entitlements";
import type { Actor, CoreContext } from "../../context";
import { randomToken, sha256 } from "../../lib/crypto";
/** Keys are recognisable (secret scanners, logs) by this prefix. */
export const API_KEY_PREFIX = "psk_live_";
import { loadOwnApp } from "../apps/service";

type KeyRow = typeof apiKeys.$inferSelect;

const view = (k: KeyRow) => ({
  id: k.id,
  name: k.name,
  scope: k.scope,
  app_id: k.appId,
  key_hint: k.keyHint,
  created_at: k.createdAt.toISOString(),
  last_used_at: k.lastUsedAt ? k.lastUsedAt.toISOString() : null,
});

/** The one plan check for API keys, shared with authentication. */
export function assertApiKeysAllowed(actor: Actor) {
  requireFeature(actor, "api_keys");
}

export async function createApiKey(ctx: CoreContext, actor: Actor, input: { name: string; app_id?: number; scope?: "admin" }) {
  assertApiKeysAllowed(actor);
  // a key can never reach further than the credential that creates it
  if (actor.appId !== null && input.app_id !== actor.appId) throw forbidden(`this API key is limited to app ${actor.appId}`);
  let scope = "account";
  if (input.scope === "admin") {
    if (!actor.isAdmin) throw adminRequired();
    if (input.app_id !== undefined) throw forbidden("an admin key cannot be limited to one app");
    scope = "admin";
  } else if (input.app_id !== undefined) {
    await loadOwnApp(ctx, actor, input.app_id);
    scope = "app";
  }
  const key = API_KEY_PREFIX + randomToken(32);
  const [row] = await ctx.db
    .insert(apiKeys)
    .values({ userId: actor.userId, name: input.name.trim(), keyHash: sha256(key), keyHint: key.slice(-4), scope, appId: input.app_id ?? null })
    .returning();
  return { ...view(row!), key };
}

export async function listApiKeys(ctx: CoreContext, actor: Actor) {
  assertApiKeysAllowed(actor);
  const rows = await ctx.db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.userId, actor.userId), isNull(apiKeys.revokedAt)))
    .orderBy(asc(apiKeys.id));
  return rows.filter((k) => actor.appId === null || k.appId === actor.appId).map(view);
}

export async function revokeApiKey(ctx: CoreContext, actor: Actor, keyId: number) {
  assertApiKeysAllowed(actor);
  const [row] = await ctx.db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.userId, actor.userId), isNull(apiKeys.revokedAt)));
  if (!row || (actor.appId !== null && row.appId !== actor.appId)) throw notFound("API key");
  await ctx.db.update(apiKeys).set({ revokedAt: ctx.now() }).where(eq(apiKeys.id, keyId));
}
