import { eq } from "drizzle-orm";
import { apps, users, SendSubjects, type AppCredentialsEntry } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import { open, seal } from "../../lib/crypto";

/**
 * Dispatchers hold no database: core publishes each app's transport credentials to the KV bucket
 * `app_credentials`, the whole entry sealed with MASTER_KEY, after every change and in full at start.
 * Dispatchers cache clients by `version` and rebuild them when it changes.
 */
async function entryFor(ctx: CoreContext, row: typeof apps.$inferSelect, ownerEmail: string): Promise<AppCredentialsEntry> {
  const key = ctx.config.masterKey;
  const fcm = row.fcmCredentialsEnc ? JSON.parse(open(key, row.fcmCredentialsEnc)) : null;
  return {
    app_id: row.id,
    version: row.credentialsVersion,
    fcm: fcm ? { project_id: fcm.project_id, client_email: fcm.client_email, private_key: fcm.private_key } : null,
    apns: row.apnsKeyEnc
      ? { key_p8: open(key, row.apnsKeyEnc), key_id: row.apnsKeyId!, team_id: row.apnsTeamId!, bundle_id: row.apnsBundleId!, production: !!row.apnsProduction }
      : null,
    // the VAPID subject is the contact push services may use about this sender
    webpush: { public_key: row.vapidPublicKey, private_key: open(key, row.vapidPrivateKeyEnc), subject: `mailto:${ownerEmail}` },
  };
}

export async function publishCredentials(ctx: CoreContext, appId?: number) {
  const kv = await ctx.bus.kv(SendSubjects.credentialsBucket);
  const q = ctx.db.select({ app: apps, email: users.email }).from(apps).innerJoin(users, eq(users.id, apps.userId));
  const rows = appId ? await q.where(eq(apps.id, appId)) : await q;
  for (const r of rows) {
    await kv.put(String(r.app.id), seal(ctx.config.masterKey, JSON.stringify(await entryFor(ctx, r.app, r.email))));
  }
  if (appId && rows.length === 0) await kv.delete(String(appId));
  if (!appId) {
    const live = new Set(rows.map((r) => String(r.app.id)));
    for (const k of await kv.keys()) if (!live.has(k)) await kv.delete(k);
  }
  return rows.length;
}
