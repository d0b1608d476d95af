import { and, asc, count, eq, sql } from "drizzle-orm";
import { createPrivateKey } from "node:crypto";
import webpush from "web-push";
import { apps, users } from "@pushstack/schema";
import { badRequest, forbidden, notFound } from "@pushstack/http";
import type { Actor, CoreContext } from "../../context";
import { seal, randomToken } from "../../lib/crypto";
import { publishDirectory } from "../directory/service";
import { requireAppCapacity } from "../billing/entitlements";
import { publishCredentials } from "../directory/credentials";

type AppRow = typeof apps.$inferSelect;

/** The app object as its owner sees it: never a private key or a credential in clear. */
export function appView(a: AppRow) {
  return {
    id: a.id,
    name: a.name,
    platform: a.platform,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
    postback_token: a.postbackToken,
    archived: a.archived,
    app_link: a.appLink,
    vapid_public_key: a.vapidPublicKey,
    credentials: {
      fcm: a.fcmCredentialsEnc ? { project_id: a.fcmProjectId ?? "", client_email: a.fcmClientEmail ?? "" } : null,
      apns: a.apnsKeyEnc
        ? { key_id: a.apnsKeyId ?? "", team_id: a.apnsTeamId ?? "", bundle_id: a.apnsBundleId ?? "", production: !!a.apnsProduction }
        : null,
      webpush: { vapid_public_key: a.vapidPublicKey },
      version: a.credentialsVersion,
    },
  };
}

/**
 * The one way services load an app for a caller: another account's app, or an app outside an
 * app-scoped key, is "not found" (no existence leak).
 */
export async function loadOwnApp(ctx: CoreContext, actor: Actor, appId: number): Promise<AppRow> {
  if (actor.appId !== null && actor.appId !== appId) throw notFound("app");
  const [app] = await ctx.db.select().from(apps).where(and(eq(apps.id, appId), eq(apps.userId, actor.userId)));
  if (!app) throw notFound("app");
  return app;
}

function assertAccountWide(actor: Actor) {
  if (actor.appId !== null) throw forbidden(`this API key is limited to app ${actor.appId}`);
}

export async function listApps(ctx: CoreContext, actor: Actor) {
  const where = actor.appId !== null ? and(eq(apps.userId, actor.userId), eq(apps.id, actor.appId)) : eq(apps.userId, actor.userId);
  const rows = await ctx.db.select().from(apps).where(where).orderBy(asc(apps.id));
  return rows.map(appView);
}

export async function createApp(ctx: CoreContext, actor: Actor, input: { name: string; platform: string; app_link?: string | null }) {
  assertAccountWide(actor);
  const vapid = webpush.generateVAPIDKeys();
  const app = await ctx.db.transaction(async (tx) => {
    // lock the account row: concurrent creates cannot both pass the app limit
    const [owner] = await tx.select().from(users).where(eq(users.id, actor.userId)).for("update");
    if (!owner) throw notFound("user");
    const [{ n }] = (await tx.select({ n: count() }).from(apps).where(eq(apps.userId, actor.userId))) as [{ n: number }];
    requireAppCapacity(owner.plan, Number(n));
    const [row] = await tx
      .insert(apps)
      .values({
        userId: actor.userId,
        name: input.name.trim(),
        platform: input.platform,
        appLink: input.app_link ?? null,
        postbackToken: randomToken(24),
        vapidPublicKey: vapid.publicKey,
        vapidPrivateKeyEnc: seal(ctx.config.masterKey, vapid.privateKey),
      })
      .returning();
    return row!;
  });
  await publishDirectory(ctx, { appId: app.id });
  await publishCredentials(ctx, app.id);
  return appView(app);
}

export async function getApp(ctx: CoreContext, actor: Actor, appId: number) {
  return appView(await loadOwnApp(ctx, actor, appId));
}

export async function updateApp(ctx: CoreContext, actor: Actor, appId: number, input: { name?: string; app_link?: string | null; archived?: boolean }) {
  await loadOwnApp(ctx, actor, appId);
  const patch: Partial<AppRow> = { updatedAt: ctx.now() };
  if (input.name !== undefined) patch.name = input.name.trim();
  if (input.app_link !== undefined) patch.appLink = input.app_link;
  if (input.archived !== undefined) patch.archived = input.archived;
  const [row] = await ctx.db.update(apps).set(patch).where(eq(apps.id, appId)).returning();
  await publishDirectory(ctx, { appId });
  return appView(row!);
}

export async function deleteApp(ctx: CoreContext, actor: Actor, appId: number) {
  await loadOwnApp(ctx, actor, appId);
  await ctx.db.delete(apps).where(eq(apps.id, appId));
  await publishDirectory(ctx, { appId });
  await publishCredentials(ctx, appId);
}

export async function rotatePostbackToken(ctx: CoreContext, actor: Actor, appId: number) {
  await loadOwnApp(ctx, actor, appId);
  const [row] = await ctx.db.update(apps).set({ postbackToken: randomToken(24), updatedAt: ctx.now() }).where(eq(apps.id, appId)).returning();
  await publishDirectory(ctx, { appId });
  return appView(row!);
}

function parsePrivateKey(pem: string, what: string) {
  try {
    return createPrivateKey(pem);
  } catch {
    throw badRequest(`${what} is not a valid PEM private key`);
  }
}

export async function setFcmCredentials(ctx: CoreContext, actor: Actor, appId: number, serviceAccount: string | Record<string, unknown>) {
  await loadOwnApp(ctx, actor, appId);
  let sa: Record<string, unknown>;
  try {
    sa = typeof serviceAccount === "string" ? JSON.parse(serviceAccount) : serviceAccount;
  } catch {
    throw badRequest("service_account is not valid JSON");
  }
  for (const f of ["project_id", "client_email", "private_key"]) {
    if (typeof sa[f] !== "string" || !(sa[f] as string).length) throw badRequest(`service_account.${f} is required`);
  }
  if (sa.type !== undefined && sa.type !== "service_account") throw badRequest('service_account.type must be "service_account"');
  if (parsePrivateKey(sa.private_key as string, "service_account.private_key").asymmetricKeyType !== "rsa") {
    throw badRequest("service_account.private_key must be an RSA key");
  }
  const [row] = await ctx.db
    .update(apps)
    .set({
      fcmCredentialsEnc: seal(ctx.config.masterKey, JSON.stringify(sa)),
      fcmProjectId: sa.project_id as string,
      fcmClientEmail: sa.client_email as string,
      credentialsVersion: sql`${apps.credentialsVersion} + 1`,
      updatedAt: ctx.now(),
    })
    .where(eq(apps.id, appId))
    .returning();
  await publishCredentials(ctx, appId);
  return appView(row!).credentials;
}

export async function setApnsCredentials(
  ctx: CoreContext,
  actor: Actor,
  appId: number,
  input: { key_p8: string; key_id: string; team_id: string; bundle_id: string; production: boolean },
) {
  await loadOwnApp(ctx, actor, appId);
  const key = parsePrivateKey(input.key_p8, "key_p8");
  if (key.asymmetricKeyType !== "ec" || key.asymmetricKeyDetails?.namedCurve !== "prime256v1") {
    throw badRequest("key_p8 must be an APNs auth key (EC P-256)");
  }
  const [row] = await ctx.db
    .update(apps)
    .set({
      apnsKeyEnc: seal(ctx.config.masterKey, input.key_p8),
      apnsKeyId: input.key_id,
      apnsTeamId: input.team_id,
      apnsBundleId: input.bundle_id,
      apnsProduction: input.production,
      credentialsVersion: sql`${apps.credentialsVersion} + 1`,
      updatedAt: ctx.now(),
    })
    .where(eq(apps.id, appId))
    .returning();
  await publishCredentials(ctx, appId);
  return appView(row!).credentials;
}

export async function deleteCredentials(ctx: CoreContext, actor: Actor, appId: number, kind: "fcm" | "apns") {
  await loadOwnApp(ctx, actor, appId);
  const patch =
    kind === "fcm"
      ? { fcmCredentialsEnc: null, fcmProjectId: null, fcmClientEmail: null }
      : { apnsKeyEnc: null, apnsKeyId: null, apnsTeamId: null, apnsBundleId: null, apnsProduction: null };
  const [row] = await ctx.db
    .update(apps)
    .set({ ...patch, credentialsVersion: sql`${apps.credentialsVersion} + 1`, updatedAt: ctx.now() })
    .where(eq(apps.id, appId))
    .returning();
  await publishCredentials(ctx, appId);
  return appView(row!).credentials;
}

/** A new VAPID key pair: existing web subscriptions stop working, so this is an explicit, separate call. */
export async function rotateVapid(ctx: CoreContext, actor: Actor, appId: number) {
  await loadOwnApp(ctx, actor, appId);
  const vapid = webpush.generateVAPIDKeys();
  const [row] = await ctx.db
    .update(apps)
    .set({
      vapidPublicKey: vapid.publicKey,
      vapidPrivateKeyEnc: seal(ctx.config.masterKey, vapid.privateKey),
      credentialsVersion: sql`${apps.credentialsVersion} + 1`,
      updatedAt: ctx.now(),
    })
    .where(eq(apps.id, appId))
    .returning();
  await publishCredentials(ctx, appId);
  return appView(row!);
}
