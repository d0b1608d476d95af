import { eq } from "drizzle-orm";
import { silentLogger } from "@pushstack/config";
import { appPushPacks, devices, packEventPushes, packLanguages, packScheduledPushes, pushPacks, pushTemplates, sends, type PushTranslation } from "@pushstack/schema";
import { startDispatcher } from "@pushstack/dispatcher";
import { startWebPushPeer, type WebPushPeer } from "@pushstack/testing";
import type { TestCore } from "../../testing/harness";

/** Test helpers for the sending module: packs and devices straight into the database, a real dispatcher and Web Push peer. */
export async function startPeerAndDispatcher(t: TestCore) {
  const peer = await startWebPushPeer();
  const stop = await startDispatcher({ config: t.ctx.config, log: silentLogger, bus: t.bus, transports: { webpush: { allowedHosts: [peer.host], ca: peer.ca } } });
  return {
    peer,
    async close() {
      await stop();
      await peer.close();
    },
  };
}

type Content = { title: string; body?: string | null; audienceTag?: string | null };

/** A pack with languages, attached to an app; returns the language ids by code. */
export async function makePack(t: TestCore, o: { userId: number | null; appId: number; languages: string[]; fallback: string; system?: boolean; published?: boolean }) {
  const [pack] = await t.ctx.db
    .insert(pushPacks)
    .values({ userId: o.userId, name: "P", fallbackLanguage: o.fallback, isSystem: o.system ?? false, isPublished: o.published ?? false })
    .returning();
  const langs: Record<string, number> = {};
  for (const code of o.languages) {
    const [l] = await t.ctx.db.insert(packLanguages).values({ packId: pack!.id, languageCode: code }).returning();
    langs[code] = l!.id;
  }
  await t.ctx.db.insert(appPushPacks).values({ appId: o.appId, packId: pack!.id });
  return { packId: pack!.id, langs };
}

export async function addScheduled(t: TestCore, languageId: number, dayOfWeek: number, sendTime: string, c: Content) {
  const [p] = await t.ctx.db.insert(packScheduledPushes).values({ languageId, dayOfWeek, sendTime, title: c.title, body: c.body ?? null, audienceTag: c.audienceTag ?? null }).returning();
  return p!.id;
}

export async function addEvent(t: TestCore, languageId: number, eventCode: string, delayMinutes: number, c: Content) {
  const [p] = await t.ctx.db
    .insert(packEventPushes)
    .values({ languageId, eventCode, delayMinutes, title: c.title, body: c.body ?? null, audienceTag: c.audienceTag ?? null })
    .returning();
  return p!.id;
}

/** A push template (Pushes group) of an app, straight into the database. */
export async function makeTemplate(t: TestCore, o: { userId: number; appId: number; defaultLanguage: string; translations: Record<string, PushTranslation> }) {
  const [p] = await t.ctx.db
    .insert(pushTemplates)
    .values({ userId: o.userId, appId: o.appId, name: "T", defaultLanguage: o.defaultLanguage, translations: o.translations })
    .returning();
  return p!.id;
}

/** A web device whose subscription points at the peer (applicationServerKey = the app's VAPID key). */
export async function webDevice(
  t: TestCore,
  peer: WebPushPeer,
  app: { id: number; vapid_public_key: string },
  o: { ext: string; language: string | null; tags?: Record<string, string>; country?: string | null; events?: string[] },
) {
  const sub = peer.subscribe({ applicationServerKey: app.vapid_public_key });
  const [d] = await t.ctx.db
    .insert(devices)
    .values({
      appId: app.id,
      installToken: `srv_${o.ext}`,
      externalId: o.ext,
      platform: "web",
      language: o.language,
      country: o.country ?? null,
      events: o.events ?? [],
      tags: o.tags ?? {},
      transportType: "webpush",
      transportToken: JSON.stringify(sub.subscription),
      source: "server",
    })
    .returning();
  return { id: d!.id, endpoint: sub.subscription.endpoint };
}

/** Pushes the peer decrypted for an endpoint, parsed. */
export const receivedBy = (peer: WebPushPeer, endpoint: string) => peer.received.filter((r) => r.endpoint === endpoint).map((r) => JSON.parse(r.payload));

export async function waitFor(cond: () => boolean | Promise<boolean>, ms = 10_000) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error("timed out");
    await Bun.sleep(25);
  }
}

/** Resolves once no send of this test core is still fanning out. */
export async function fannedOut(t: TestCore) {
  await waitFor(async () => (await t.ctx.db.select({ id: sends.id }).from(sends).where(eq(sends.status, "fanning"))).length === 0);
}
