import { and, asc, eq, gt, isNotNull, sql, type SQL } from "drizzle-orm";
import {
  apps, devices, packEventPushes, packLanguages, packScheduledPushes, pushPacks, pushTemplates, schedulers, sends, users,
  SendSubjects, SEND_JOB_MAX_RECIPIENTS, type PushTranslation, type SendJob, type SendRecipient,
} from "@pushstack/schema";
import type { CoreContext } from "../../context";
import type { Db } from "../../db";
import { chooseLanguage } from "../ingest/triggers";
import { sendingAllowed } from "../billing/limits";
import { deviceFilterSql, type DeviceFilters } from "../devices/service";

/** A pack push's audience, stored as JSON on the send row. */
export interface PackAudience {
  pack_id: number | null;
  /** Scheduled pack push: devices whose chosen pack language (chooseLanguage) is this one. */
  language_id?: number;
  /** Event push: this one device (its language was chosen when the event fired). */
  device_id?: number;
  audience_tag: string | null;
}

/**
 * A scheduler send's audience: the app's devices matching `filters` (checked when the scheduler was
 * saved), narrowed to `device_id` for event schedulers (and test sends, whose filters are empty);
 * each device gets the template translation of its language.
 */
export interface SchedulerAudience {
  scheduler_id: number;
  template_id: number;
  filters: DeviceFilters;
  device_id?: number;
}

/** What a send reaches, stored as JSON on the send row. */
export type Audience = PackAudience | SchedulerAudience;
const isScheduler = (a: Audience): a is SchedulerAudience => "scheduler_id" in a;

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

/**
 * Pages one send publishes per turn (one transaction): fewer round trips and commits per recipient, while a
 * turn stays short (2,000 devices) so the pump still alternates between apps' sends.
 */
const PAGES_PER_TURN = 4;

/** How long a job may wait in a queue before the dispatcher drops it (wall clock: it is about queue latency). */
const JOB_TTL_MS = 60 * 60_000;

type Content = { title: string; body: string | null; iconUrl: string | null; imageUrl: string | null; clickUrl: string | null };

async function content(tx: Db, source: string, id: number): Promise<Content | null> {
  const table = source === "pack_event" ? packEventPushes : packScheduledPushes;
  const [p] = await tx
    .select({ title: table.title, body: table.body, iconUrl: table.iconUrl, imageUrl: table.imageUrl, clickUrl: table.clickUrl })
    .from(table)
    .where(eq(table.id, id));
  return p ?? null;
}

const translationContent = (t: PushTranslation): Content => ({
  title: t.title,
  body: t.body ?? null,
  iconUrl: t.icon_url ?? null,
  imageUrl: t.image_url ?? null,
  clickUrl: t.click_url ?? null,
});

type SendRow = typeof sends.$inferSelect;

/**
 * Whether a send may go on: its app exists and is not archived, the owner's account is not past_due,
 * its pack (if any) is usable (own, or a published system pack), its scheduler (if any) exists and is
 * not paused. One query by primary keys, run before every turn: pausing stops a send mid-fan-out.
 */
async function stillLive(tx: Db, s: SendRow): Promise<boolean> {
  const pack =
    s.packId !== null
      ? sql<boolean>`exists (select 1 from ${pushPacks} where ${pushPacks.id} = ${s.packId} and (not ${pushPacks.isSystem} or ${pushPacks.isPublished}))`
      : sql<boolean>`true`;
  const scheduler =
    s.source === "scheduler" ? sql<boolean>`exists (select 1 from ${schedulers} where ${schedulers.id} = ${s.sourceId} and ${schedulers.status} <> 'paused')` : sql<boolean>`true`;
  const [r] = await tx
    .select({ archived: apps.archived, status: users.subscriptionStatus, pack, scheduler })
    .from(apps)
    .innerJoin(users, eq(users.id, apps.userId))
    .where(eq(apps.id, s.appId));
  return !!r && !r.archived && sendingAllowed(r.status) && !!r.pack && !!r.scheduler;
}

/** What a send needs on every page and does not change during it; the pump keeps it per send. */
type Statics = {
  app: typeof apps.$inferSelect;
  /** Pack sends: the push's content. */
  push: Content | null;
  /** Scheduled pack sends: the pack's languages (the page is narrowed to the send's language). */
  pack: { fallback: string; langs: { id: number; code: string }[] } | null;
  /** Scheduler sends: the template's translations (each device gets its language's). */
  template: { fallback: string; langs: { id: number; code: string; content: Content }[] } | null;
};

/**
 * Publishes the next turn (PAGES_PER_TURN pages of up to 500 devices by id) of one send, in a transaction holding the send row
 * (FOR UPDATE SKIP LOCKED: a replica already on this send makes the others skip it). Job ids are
 * `<send>.<cursor>.<transport>` (pack sends) or `<send>.<cursor>.<transport>.<language>` (scheduler
 * sends: one job carries one translation), so a page republished after a crash is dropped by the
 * bus's msgId dedup. A send whose app, account, pack or scheduler was paused since it started is
 * marked `cancelled`. Returns false when the send is finished, cancelled or held by someone else.
 */
export async function fanOutPage(ctx: CoreContext, sendId: number, cache: Map<number, Statics> = new Map()): Promise<boolean> {
  return ctx.db.transaction(async (tx) => {
    const [s] = await tx.select().from(sends).where(and(eq(sends.id, sendId), eq(sends.status, "fanning"))).for("update", { skipLocked: true });
    if (!s) return false;
    const finish = async (status: "done" | "cancelled") => {
      await tx.update(sends).set({ status }).where(eq(sends.id, s.id));
      cache.delete(s.id);
      return false;
    };
    const done = () => finish("done");
    if (!(await stillLive(tx, s))) return finish("cancelled");
    const aud = JSON.parse(s.audience) as Audience;
    let st = cache.get(s.id);
    if (!st) {
      const [app] = await tx.select().from(apps).where(eq(apps.id, s.appId));
      if (!app) return done();
      if (isScheduler(aud)) {
        const [tpl] = await tx
          .select({ fallback: pushTemplates.defaultLanguage, translations: pushTemplates.translations })
          .from(pushTemplates)
          .where(eq(pushTemplates.id, aud.template_id));
        if (!tpl) return done();
        const langs = Object.entries(tpl.translations ?? {}).map(([code, tr], i) => ({ id: i, code, content: translationContent(tr) }));
        st = { app, push: null, pack: null, template: { fallback: tpl.fallback, langs } };
      } else {
        const push = await content(tx, s.source, s.sourceId);
        if (!push) return done();
        let pack: Statics["pack"] = null;
        if (aud.language_id !== undefined && aud.pack_id !== null) {
          const [p] = await tx.select({ fallback: pushPacks.fallbackLanguage }).from(pushPacks).where(eq(pushPacks.id, aud.pack_id));
          if (!p) return done();
          const langs = await tx.select({ id: packLanguages.id, code: packLanguages.languageCode }).from(packLanguages).where(eq(packLanguages.packId, aud.pack_id));
          pack = { fallback: p.fallback, langs };
        }
        st = { app, push, pack, template: null };
      }
      cache.set(s.id, st);
    }
    const { app, push, pack, template } = st;
    let narrow: SQL[];
    if (isScheduler(aud)) narrow = deviceFilterSql(aud.filters); // event sends too: a device that no longer matches is skipped
    else {
      const tags = tagFilter(aud.audience_tag);
      narrow = tags ? [sql`${devices.tags} @> ${JSON.stringify(tags)}::jsonb`] : [];
    }
    const rows = await tx
      .select(recipientColumns)
      .from(devices)
      .where(
        and(
          eq(devices.appId, s.appId),
          gt(devices.id, s.cursor),
          eq(devices.tokenInvalid, false),
          isNotNull(devices.transportToken),
          isNotNull(devices.transportType),
          aud.device_id !== undefined ? eq(devices.id, aud.device_id) : undefined,
          ...narrow,
        ),
      )
      .orderBy(asc(devices.id))
      .limit(PAGES_PER_TURN * SEND_JOB_MAX_RECIPIENTS);
    if (rows.length === 0) return done();
    const expires = new Date(Date.now() + JOB_TTL_MS).toISOString();
    const publishes: Promise<unknown>[] = [];
    let cursor = s.cursor;
    let jobs = 0;
    let recipients = 0;
    // pages of SEND_JOB_MAX_RECIPIENTS, each keyed by the last id of the page before it: the same job ids
    // whichever replica, turn size or retry publishes them
    for (let at = 0; at < rows.length; at += SEND_JOB_MAX_RECIPIENTS) {
      const page = rows.slice(at, at + SEND_JOB_MAX_RECIPIENTS);
      const groups = groupPage(s.id, page, push, pack, template, aud);
      for (const [key, g] of groups) {
        const c = g.content;
        const job: SendJob = {
          job_id: `${s.id}.${cursor}.${key}`,
          send_id: String(s.id),
          transport: g.transport,
          app: { id: app.id, name: app.name, app_link: app.appLink },
          credentials_version: app.credentialsVersion,
          push: { source: s.source, source_id: s.sourceId, title: c.title, body: c.body, icon_url: c.iconUrl, image_url: c.imageUrl, click_url: c.clickUrl },
          render: { now: s.renderAt.toISOString(), rotation: s.rotation },
          expires_at: expires,
          recipients: g.recipients,
        };
        recipients += g.recipients.length;
        publishes.push(ctx.bus.publish(SendSubjects.job(g.transport), JSON.stringify(job), { msgId: job.job_id }));
      }
      jobs += groups.size;
      cursor = page[page.length - 1]!.id;
    }
    // all acknowledged by the stream before the cursor moves past them (a failure rolls the turn back and
    // the retry's republished jobs are dropped by msgId dedup)
    await Promise.all(publishes);
    await tx
      .update(sends)
      .set({ cursor, jobs: sql`${sends.jobs} + ${jobs}`, recipients: sql`${sends.recipients} + ${recipients}` })
      .where(eq(sends.id, s.id));
    if (rows.length < PAGES_PER_TURN * SEND_JOB_MAX_RECIPIENTS || aud.device_id !== undefined) return done();
    return true;
  });
}

/** The device columns a recipient needs (the rest of the row, e.g. its event list, is not read). */
const recipientColumns = {
  id: devices.id,
  transportType: devices.transportType,
  transportToken: devices.transportToken,
  externalId: devices.externalId,
  language: devices.language,
  country: devices.country,
  platform: devices.platform,
  model: devices.model,
  tzSec: devices.tzSec,
  tags: devices.tags,
};
type RecipientRow = { [K in keyof typeof recipientColumns]: (typeof devices.$inferSelect)[K] };
type Group = { transport: SendJob["transport"]; content: Content; recipients: SendRecipient[] };

/** One page's jobs: one per (transport, content); pack sends have one content, scheduler sends one per translation. */
function groupPage(sendId: number, page: RecipientRow[], push: Content | null, pack: Statics["pack"], template: Statics["template"], aud: Audience): Map<string, Group> {
  const groups = new Map<string, Group>();
  for (const d of page) {
    const transport = d.transportType;
    if (transport !== "fcm" && transport !== "apns" && transport !== "webpush") continue;
    let key: string = transport;
    let c = push!;
    if (template) {
      const lang = chooseLanguage(d.language, template.langs, template.fallback);
      if (!lang) continue; // the template has no translation in its default language
      key = `${transport}.${lang.code}`;
      c = lang.content;
    } else if (pack && chooseLanguage(d.language, pack.langs, pack.fallback)?.id !== (aud as PackAudience).language_id) continue;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { transport, content: c, recipients: [] }));
    g.recipients.push({
      device_id: d.id,
      msg_id: msgIdOf(sendId, d.id),
      token: d.transportToken!,
      external_id: d.externalId,
      language: d.language,
      country: d.country,
      platform: d.platform,
      platform_name: d.model,
      tz_sec: d.tzSec,
      tags: d.tags ?? {},
    });
  }
  return groups;
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

