import { and, asc, eq, gt, isNotNull, sql } from "drizzle-orm";
import { apps, devices, packEventPushes, packLanguages, packScheduledPushes, pushPacks, sends, SendSubjects, SEND_JOB_MAX_RECIPIENTS, type SendJob, type SendRecipient } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import type { Db } from "../../db";
import { chooseLanguage } from "../ingest/triggers";

/** What a send reaches, stored as JSON on the send row. */
export interface Audience {
  pack_id: number | null;
  /** Scheduled pack push: devices whose chosen pack language (chooseLanguage) is this one. */
  language_id?: number;
  /** Event push: this one device (its language was chosen when the event fired). */
  device_id?: number;
  audience_tag: string | null;
}

/**
 * `audience_tag` rule: `key=value` matches devices whose tag `key` equals `value`; a bare `value`
 * matches tag `segment` = `value`; empty/null matches everyone. Returned as a jsonb containment object.
 */
export function tagFilter(tag: string | null): Record<string, string> | null {
  const t = tag?.trim();
  if (!t) return null;
  const i = t.indexOf("=");
  if (i < 0) return { segment: t };
  return { [t.slice(0, i).trim()]: t.slice(i + 1).trim() };
}

export const msgIdOf = (sendId: number, deviceId: number) => `${sendId}.${deviceId}`;
/** The send a recipient's msg_id belongs to, or null for a msg_id core did not mint. */
export function sendIdOf(msgId: string): number | null {
  const m = /^(\d{1,15})\.\d{1,20}$/.exec(msgId);
  return m ? Number(m[1]) : null;
}

/** How long a job may wait in a queue before the dispatcher drops it (wall clock: it is about queue latency). */
const JOB_TTL_MS = 60 * 60_000;

async function content(tx: Db, source: string, id: number) {
  const table = source === "pack_event" ? packEventPushes : packScheduledPushes;
  const [p] = await tx
    .select({ title: table.title, body: table.body, iconUrl: table.iconUrl, imageUrl: table.imageUrl, clickUrl: table.clickUrl })
    .from(table)
    .where(eq(table.id, id));
  return p ?? null;
}

/**
 * Publishes the next page (up to 500 devices by id) of one send, in a transaction holding the send row
 * (FOR UPDATE SKIP LOCKED: a replica already on this send makes the others skip it). Job ids are
 * `<send>.<cursor>.<transport>`, so a page republished after a crash is dropped by the bus's msgId dedup.
 * Returns false when the send is finished or held by someone else.
 */
/** What a send needs on every page and does not change during it; the pump keeps it per send. */
type Statics = { app: typeof apps.$inferSelect; push: NonNullable<Awaited<ReturnType<typeof content>>>; pack: { fallback: string; langs: { id: number; code: string }[] } | null };

export async function fanOutPage(ctx: CoreContext, sendId: number, cache: Map<number, Statics> = new Map()): Promise<boolean> {
  return ctx.db.transaction(async (tx) => {
    const [s] = await tx.select().from(sends).where(and(eq(sends.id, sendId), eq(sends.status, "fanning"))).for("update", { skipLocked: true });
    if (!s) return false;
    const done = async () => {
      await tx.update(sends).set({ status: "done" }).where(eq(sends.id, s.id));
      return false;
    };
    const aud = JSON.parse(s.audience) as Audience;
    let st = cache.get(s.id);
    if (!st) {
      const [app] = await tx.select().from(apps).where(eq(apps.id, s.appId));
      const push = await content(tx, s.source, s.sourceId);
      if (!app || !push) return done();
      let pack: Statics["pack"] = null;
      if (aud.language_id !== undefined && aud.pack_id !== null) {
        const [p] = await tx.select({ fallback: pushPacks.fallbackLanguage }).from(pushPacks).where(eq(pushPacks.id, aud.pack_id));
        if (!p) return done();
        const langs = await tx.select({ id: packLanguages.id, code: packLanguages.languageCode }).from(packLanguages).where(eq(packLanguages.packId, aud.pack_id));
        pack = { fallback: p.fallback, langs };
      }
      st = { app, push, pack };
      cache.set(s.id, st);
    }
    const { app, push, pack } = st;
    const tags = tagFilter(aud.audience_tag);
    const page = await tx
      .select()
      .from(devices)
      .where(
        and(
          eq(devices.appId, s.appId),
          gt(devices.id, s.cursor),
          eq(devices.tokenInvalid, false),
          isNotNull(devices.transportToken),
          isNotNull(devices.transportType),
          aud.device_id !== undefined ? eq(devices.id, aud.device_id) : undefined,
          tags ? sql`${devices.tags} @> ${JSON.stringify(tags)}::jsonb` : undefined,
        ),
      )
      .orderBy(asc(devices.id))
      .limit(SEND_JOB_MAX_RECIPIENTS);
    if (page.length === 0) return done();
    let chosen = page;
    if (pack) chosen = page.filter((d) => chooseLanguage(d.language, pack.langs, pack.fallback)?.id === aud.language_id);
    const byTransport = new Map<string, SendRecipient[]>();
    for (const d of chosen) {
      if (d.transportType !== "fcm" && d.transportType !== "apns" && d.transportType !== "webpush") continue;
      const list = byTransport.get(d.transportType) ?? [];
      list.push({
        device_id: d.id,
        msg_id: msgIdOf(s.id, d.id),
        token: d.transportToken!,
        external_id: d.externalId,
        language: d.language,
        country: d.country,
        platform: d.platform,
        platform_name: d.model,
        tz_sec: d.tzSec,
        tags: d.tags ?? {},
      });
      byTransport.set(d.transportType, list);
    }
    const expires = new Date(Date.now() + JOB_TTL_MS).toISOString();
    for (const [transport, recipients] of byTransport) {
      const job: SendJob = {
        job_id: `${s.id}.${s.cursor}.${transport}`,
        send_id: String(s.id),
        transport: transport as SendJob["transport"],
        app: { id: app.id, name: app.name, app_link: app.appLink },
        credentials_version: app.credentialsVersion,
        push: { source: s.source, source_id: s.sourceId, title: push.title, body: push.body, icon_url: push.iconUrl, image_url: push.imageUrl, click_url: push.clickUrl },
        render: { now: s.renderAt.toISOString(), rotation: s.rotation },
        expires_at: expires,
        recipients,
      };
      await ctx.bus.publish(SendSubjects.job(transport), JSON.stringify(job), { msgId: job.job_id });
    }
    const last = page[page.length - 1]!.id;
    await tx
      .update(sends)
      .set({ cursor: last, jobs: sql`${sends.jobs} + ${byTransport.size}`, recipients: sql`${sends.recipients} + ${chosen.length}` })
      .where(eq(sends.id, s.id));
    if (page.length < SEND_JOB_MAX_RECIPIENTS || aud.device_id !== undefined) return done();
    return true;
  });
}

/**
 * The pump: publishes every unfinished send page by page, round-robin across sends, so a million-device
 * app does not hold back other apps' sends. One pump per process; kick() while running schedules one
 * more pass. Sends left `fanning` by a crashed process are resumed by any replica's next pass.
 */
export function createPump(ctx: CoreContext) {
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  const pass = async () => {
    for (;;) {
      const open = await ctx.db.select({ id: sends.id }).from(sends).where(eq(sends.status, "fanning")).orderBy(asc(sends.id)).limit(1000);
      let progressed = false;
      let ids = open.map((r) => r.id);
      // app, push content and pack languages, read once per send per pass (not per page)
      const cache = new Map<number, Statics>();
      while (ids.length && !stopped) {
        const next: number[] = [];
        for (const id of ids) {
          if (stopped) return;
          if (await fanOutPage(ctx, id, cache)) {
            progressed = true;
            next.push(id);
          }
        }
        ids = next;
      }
      if (!progressed || stopped) return;
    }
  };
  const run = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await pass();
        } catch (err) {
          ctx.log.error("send pump failed", { err });
        }
      } while (again && !stopped);
    })().finally(() => (running = null));
    return running;
  };
  return {
    kick: run,
    async stop() {
      stopped = true;
      await running;
    },
  };
}
export type Pump = ReturnType<typeof createPump>;

