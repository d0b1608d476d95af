import { and, desc, eq, lt, type SQL } from "drizzle-orm";
import { apps, devices, normalizeLanguage, pushTemplates, schedulers, PUSH_LIMITS, type PushTranslation } from "@pushstack/schema";
import { badRequest, conflict, notFound } from "@pushstack/http";
import { idCursor, pageLimit, queryId } from "../../lib/params";
import { isStillReferenced } from "../../lib/db-errors";
import { bindSend, compile, fastRng, seededRng, validateTemplate, TemplateError, toClickUrl, type Program, type RenderDevice } from "@pushstack/templating";
import type { Actor, CoreContext } from "../../context";
import type { Db } from "../../db";
import { loadOwnApp } from "../apps/service";
import { requireFeature } from "../billing/entitlements";
import { chooseLanguage } from "../ingest/triggers";
import { checkDeviceFilters } from "../devices/service";

/**
 * Push templates ("Pushes"): one push's content in up to 50 languages. Every text is validated with
 * libs/templating exactly as the dispatcher will compile it, so a stored template always renders.
 */

type PushRow = typeof pushTemplates.$inferSelect;
/** A translation as stored and answered: every field present, unset ones null. */
export type Translation = { title: string; body: string | null; icon_url: string | null; image_url: string | null; click_url: string | null };

const TRANSLATION_KEYS = ["title", "body", "icon_url", "image_url", "click_url"] as const;
const TRANSLATION_SHAPE = "{title, body?, icon_url?, image_url?, click_url?}";

// ---- validation ------------------------------------------------------------------------------

/** `{Push={A|B}}` anywhere in the tree (inside choices and Upper/Lower too). */
function usesRotation(p: Program): boolean {
  type N = Program["nodes"][number];
  const walk = (nodes: readonly N[]): boolean =>
    nodes.some((n) => n.k === "push" || (n.k === "choice" && n.variants.some(walk)) || (n.k === "case" && walk(n.body)));
  return walk(p.nodes);
}

/** Whether a text uses A/B rotation. The parser makes a rotation only of the literal "{Push=", so texts without it are not parsed. */
function textRotates(text: string | null | undefined): boolean {
  if (!text || !text.includes("{Push=")) return false;
  try {
    return usesRotation(compile(text));
  } catch {
    return false;
  }
}

export const translationRotates = (t: Pick<PushTranslation, "title" | "body" | "click_url">) => textRotates(t.title) || textRotates(t.body) || textRotates(t.click_url);

function checkTemplate(text: string, field: string) {
  const r = validateTemplate(text);
  if (!r.ok) throw badRequest(`${field}: ${r.error}`);
}

function checkPlainUrl(value: string, field: string) {
  let url: URL | null = null;
  try {
    url = /\s/.test(value) ? null : new URL(value);
  } catch {}
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) throw badRequest(`${field} must be an http(s) URL`);
}

/** Icon and image URLs are sent as written (only click_url is rendered), so a macro there is a mistake. */
function checkMediaUrl(value: string, field: string) {
  if (/[{}]/.test(value)) throw badRequest(`${field} must be an http(s) URL without macros (only click_url takes macros)`);
  checkPlainUrl(value, field);
}

/** The bounded text of an optional field: a string, or null for null / absent / "". */
function optionalText(v: unknown, field: string, max: number, what: string): string | null {
  if (v === undefined || v === null || v === "") return null;
  if (typeof v !== "string") throw badRequest(`${field} must be ${what} or null`);
  if (v.length > max) throw badRequest(`${field} must be at most ${max} characters`);
  return v;
}

/**
 * One translation from the request (`at` names it in messages: "translations.es", or "" for the
 * one-language fields at the top level of the body). Every message names the field.
 */
export function parseTranslation(raw: unknown, at: string): Translation {
  const f = (name: string) => (at ? `${at}.${name}` : name);
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw badRequest(`${at || "translation"} must be an object ${TRANSLATION_SHAPE}`);
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!(TRANSLATION_KEYS as readonly string[]).includes(k)) throw badRequest(`${f(clip(k))}: unknown field (a translation has ${TRANSLATION_KEYS.join(", ")})`);
  }
  if (o.title === undefined || o.title === null) throw badRequest(`${f("title")} is required`);
  if (typeof o.title !== "string") throw badRequest(`${f("title")} must be a string`);
  if (!o.title.trim()) throw badRequest(`${f("title")} must not be empty`);
  if (o.title.length > PUSH_LIMITS.title) throw badRequest(`${f("title")} must be at most ${PUSH_LIMITS.title} characters`);
  checkTemplate(o.title, f("title"));
  const body = optionalText(o.body, f("body"), PUSH_LIMITS.body, "a string");
  if (body !== null) checkTemplate(body, f("body"));
  const icon = optionalText(o.icon_url, f("icon_url"), PUSH_LIMITS.url, "an http(s) URL");
  if (icon !== null) checkMediaUrl(icon, f("icon_url"));
  const image = optionalText(o.image_url, f("image_url"), PUSH_LIMITS.url, "an http(s) URL");
  if (image !== null) checkMediaUrl(image, f("image_url"));
  const click = optionalText(o.click_url, f("click_url"), PUSH_LIMITS.url, "an http(s) URL");
  if (click !== null) checkClickUrl(click, f("click_url"));
  return { title: o.title, body, icon_url: icon, image_url: image, click_url: click };
}

/**
 * A click URL may carry macros (`https://t.example/c?sub={{external_id}}`, `{{app_link}}?s={{tag:segment}}`):
 * then it is a template, and its start must still make an http(s) URL (`{{app_link}}` is one: the app
 * validates it). Without braces it is checked as a URL.
 */
function checkClickUrl(value: string, field: string) {
  if (!value.includes("{")) return checkPlainUrl(value, field);
  checkTemplate(value, field);
  if (!/^https?:\/\/[^\s/?#{}]/i.test(value) && !/^\{\{\s*app_link\s*\}\}/.test(value)) {
    throw badRequest(`${field} must start with http:// or https:// and a host name (not a macro), or with {{app_link}}`);
  }
  if (/\s/.test(value.replace(/\{\{[^{}]*\}\}/g, ""))) throw badRequest(`${field} must not contain spaces outside macros`);
}

const clip = (s: string) => (s.length > 40 ? s.slice(0, 40) + "…" : s);

function languageKey(raw: string, field: string): string {
  const code = raw.length <= 35 ? normalizeLanguage(raw) : null;
  if (!code) throw badRequest(`${field}: ${JSON.stringify(clip(raw))} is not a language code such as en or pt-BR`);
  return code;
}

/** Entries of a translations map, with normalised language codes; two spellings of one language are refused. */
function languageEntries<V>(map: Record<string, V>, limit: number): [string, string, V][] {
  const keys = Object.keys(map);
  if (keys.length > limit) throw badRequest(`translations: at most ${PUSH_LIMITS.translations} languages`);
  const seen = new Map<string, string>();
  return keys.map((raw) => {
    const code = languageKey(raw, "translations");
    const before = seen.get(code);
    if (before !== undefined) throw badRequest(`translations: ${JSON.stringify(before)} and ${JSON.stringify(raw)} are the same language (${code})`);
    seen.set(code, raw);
    return [code, raw, map[raw]!];
  });
}

function defaultLanguageOf(raw: string): string {
  const code = raw.length <= 35 ? normalizeLanguage(raw) : null;
  if (!code) throw badRequest("default_language must be a language code such as en or pt-BR");
  return code;
}

function requireDefaultIn(def: string, map: Record<string, unknown>) {
  if (!Object.hasOwn(map, def)) throw badRequest(`default_language ${def} must be one of the translations (${Object.keys(map).sort().join(", ") || "none"})`);
}

/**
 * Runs before the body schema (Elysia `transform`): the schema would report a bad entry as
 * "expected union value"; this names the language and the field. A request that passes is checked
 * again, with normalised codes, by the service.
 */
export function precheckTranslations(body: unknown, allowNull: boolean) {
  if (!body || typeof body !== "object") return;
  const map = (body as { translations?: unknown }).translations;
  if (map === undefined) return;
  // checked here because Elysia's body normalisation turns a non-object into {} for a record schema
  if (map === null || typeof map !== "object" || Array.isArray(map)) {
    throw badRequest(`translations must be an object: language code → ${TRANSLATION_SHAPE}${allowNull ? " or null" : ""}`);
  }
  const keys = Object.keys(map);
  if (keys.length > (allowNull ? 2 : 1) * PUSH_LIMITS.translations) throw badRequest(`translations: at most ${PUSH_LIMITS.translations} languages`);
  for (const k of keys) {
    const v = (map as Record<string, unknown>)[k];
    if (v === null && allowNull) continue;
    parseTranslation(v, `translations.${clip(k)}`);
  }
}

/** The preview's record-typed field, for the same reason as above. */
export function precheckPreview(body: unknown) {
  const device = body && typeof body === "object" ? (body as { device?: unknown }).device : undefined;
  if (!device || typeof device !== "object") return;
  const tags = (device as { tags?: unknown }).tags;
  if (tags !== undefined && tags !== null && (typeof tags !== "object" || Array.isArray(tags))) throw badRequest("device.tags must be an object of string values");
}

/** A/B rotation is a plan feature: refused below Pro when any of these translations rotates. */
function gateRotation(actor: Actor, translations: Iterable<Translation>) {
  for (const t of translations) if (translationRotates(t)) return requireFeature(actor, "ab_testing");
}

// ---- views -----------------------------------------------------------------------------------

function ordered(defaultLanguage: string, map: Record<string, PushTranslation>) {
  return Object.keys(map).sort((a, b) => (a === defaultLanguage ? -1 : b === defaultLanguage ? 1 : a < b ? -1 : a > b ? 1 : 0));
}

const full = (t: PushTranslation): Translation => ({
  title: t.title,
  body: t.body ?? null,
  icon_url: t.icon_url ?? null,
  image_url: t.image_url ?? null,
  click_url: t.click_url ?? null,
});

export function pushView(r: PushRow) {
  const languages = ordered(r.defaultLanguage, r.translations);
  const translations: Record<string, Translation> = {};
  for (const l of languages) translations[l] = full(r.translations[l]!);
  return {
    id: r.id,
    app_id: r.appId,
    name: r.name,
    default_language: r.defaultLanguage,
    languages,
    translations,
    ab_testing: languages.some((l) => translationRotates(translations[l]!)),
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

// ---- access ----------------------------------------------------------------------------------

/**
 * The one way to load a push for a caller: another account's push, or one outside an app-scoped
 * key's app, is "push not found". Schedulers use it to check the push they are given.
 */
export async function loadOwnPush(ctx: CoreContext, actor: Actor, pushId: number, db: Db = ctx.db, lock = false): Promise<PushRow> {
  const q = db.select().from(pushTemplates).where(and(eq(pushTemplates.id, pushId), eq(pushTemplates.userId, actor.userId)));
  const [row] = lock ? await q.for("update") : await q;
  if (!row || (actor.appId !== null && row.appId !== actor.appId)) throw notFound("push");
  return row;
}

/**
 * The translation a device gets: its language (exact, then same primary language), else the
 * default language. The same rule as pack languages (`chooseLanguage`), so sends and previews agree.
 */
export function pickTranslation(p: Pick<PushRow, "defaultLanguage" | "translations">, deviceLanguage: string | null): { language: string; matched: boolean; translation: Translation } {
  const langs = Object.keys(p.translations).map((code, id) => ({ id, code }));
  // a fallback no code can equal: null means "no translation for that language"
  const hit = deviceLanguage ? chooseLanguage(deviceLanguage, langs, "\u0000") : null;
  const language = hit?.code ?? p.defaultLanguage;
  return { language, matched: hit !== null, translation: full(p.translations[language]!) };
}

// ---- CRUD ------------------------------------------------------------------------------------

type OneLanguage = { title?: string; body?: string | null; icon_url?: string | null; image_url?: string | null; click_url?: string | null };
export type CreateInput = OneLanguage & { app_id: number; name: string; default_language?: string; translations?: Record<string, unknown> };
export type UpdateInput = { name?: string; default_language?: string; translations?: Record<string, unknown | null> };

function cleanName(raw: string): string {
  const name = raw.trim();
  if (!name) throw badRequest("name must not be blank");
  return name;
}

export async function createPush(ctx: CoreContext, actor: Actor, input: CreateInput) {
  // an archived app may still get templates: it can be unarchived, and nothing is sent meanwhile
  await loadOwnApp(ctx, actor, input.app_id);
  const name = cleanName(input.name);
  const shorthand = (["title", "body", "icon_url", "image_url", "click_url"] as const).filter((k) => input[k] !== undefined);
  const translations: Record<string, Translation> = {};
  let def: string | undefined = input.default_language === undefined ? undefined : defaultLanguageOf(input.default_language);
  if (input.translations !== undefined) {
    if (shorthand.length) throw badRequest(`give either translations or the one-language fields (${shorthand.join(", ")}), not both`);
    for (const [code, raw, value] of languageEntries(input.translations, PUSH_LIMITS.translations)) translations[code] = parseTranslation(value, `translations.${clip(raw)}`);
    const codes = Object.keys(translations);
    if (codes.length === 0) throw badRequest("translations must have at least one language");
    if (def === undefined) {
      if (codes.length > 1) throw badRequest("default_language is required when there are several translations");
      def = codes[0]!;
    }
  } else {
    if (input.title === undefined) throw badRequest("translations is required (or title, for a one-language push)");
    def ??= "en";
    translations[def] = parseTranslation(Object.fromEntries(shorthand.map((k) => [k, input[k]])), "");
  }
  requireDefaultIn(def, translations);
  gateRotation(actor, Object.values(translations));
  const now = ctx.now();
  const [row] = await ctx.db
    .insert(pushTemplates)
    .values({ userId: actor.userId, appId: input.app_id, name, defaultLanguage: def, translations, createdAt: now, updatedAt: now })
    .returning();
  return pushView(row!);
}

export async function getPush(ctx: CoreContext, actor: Actor, pushId: number) {
  return pushView(await loadOwnPush(ctx, actor, pushId));
}

const cursor = idCursor("p");

/** Newest first (what a dashboard shows), keyset on id: stable while pushes are added. */
export async function listPushes(ctx: CoreContext, actor: Actor, q: { app_id?: string; limit?: string; cursor?: string }) {
  const where: SQL[] = [eq(pushTemplates.userId, actor.userId)];
  if (q.app_id !== undefined) {
    const app = await loadOwnApp(ctx, actor, queryId(q.app_id, "app_id"));
    where.push(eq(pushTemplates.appId, app.id));
  } else if (actor.appId !== null) {
    where.push(eq(pushTemplates.appId, actor.appId));
  }
  const limit = pageLimit(q.limit, 100);
  if (q.cursor) where.push(lt(pushTemplates.id, cursor.decode(q.cursor)));
  const rows = await ctx.db.select().from(pushTemplates).where(and(...where)).orderBy(desc(pushTemplates.id)).limit(limit + 1);
  const page = rows.slice(0, limit);
  return { items: page.map(pushView), next_cursor: rows.length > limit ? cursor.encode(page[page.length - 1]!.id) : null };
}

/**
 * PATCH: `name` and `default_language` replace; `translations` merges by language (an entry replaces
 * that language's translation as a whole, null removes the language, others stay). Read-modify-write
 * under the row lock, so two concurrent edits of different languages both land.
 */
export async function updatePush(ctx: CoreContext, actor: Actor, pushId: number, input: UpdateInput) {
  const name = input.name === undefined ? undefined : cleanName(input.name);
  const row = await ctx.db.transaction(async (tx) => {
    const cur = await loadOwnPush(ctx, actor, pushId, tx, true);
    const translations: Record<string, PushTranslation> = { ...cur.translations };
    const written: Translation[] = [];
    if (input.translations !== undefined) {
      for (const [code, raw, value] of languageEntries(input.translations, 2 * PUSH_LIMITS.translations)) {
        if (value === null) {
          delete translations[code];
        } else {
          const t = parseTranslation(value, `translations.${clip(raw)}`);
          translations[code] = t;
          written.push(t);
        }
      }
    }
    const count = Object.keys(translations).length;
    if (count === 0) throw badRequest("translations must keep at least one language");
    if (count > PUSH_LIMITS.translations) throw badRequest(`translations: at most ${PUSH_LIMITS.translations} languages`);
    const def = input.default_language === undefined ? cur.defaultLanguage : defaultLanguageOf(input.default_language);
    requireDefaultIn(def, translations);
    // only what this request writes is gated: a downgraded account keeps editing its other languages
    gateRotation(actor, written);
    const [updated] = await tx
      .update(pushTemplates)
      .set({ ...(name !== undefined ? { name } : {}), defaultLanguage: def, translations, updatedAt: ctx.now() })
      .where(eq(pushTemplates.id, pushId))
      .returning();
    return updated!;
  });
  return pushView(row);
}

async function inUse(ctx: CoreContext, pushId: number) {
  const rows = await ctx.db.select({ id: schedulers.id }).from(schedulers).where(eq(schedulers.pushId, pushId)).orderBy(schedulers.id).limit(11);
  if (!rows.length) return null;
  const ids = rows.slice(0, 10).map((r) => r.id).join(", ") + (rows.length > 10 ? ", ..." : "");
  return conflict(`push is used by scheduler(s) ${ids}: delete them or give them another push first`);
}

/**
 * 409 while a scheduler uses it. The foreign key (ON DELETE RESTRICT) decides, so a scheduler created
 * at the same moment is seen too; the message then lists who uses it.
 */
export async function deletePush(ctx: CoreContext, actor: Actor, pushId: number) {
  await loadOwnPush(ctx, actor, pushId);
  try {
    await ctx.db.delete(pushTemplates).where(eq(pushTemplates.id, pushId));
  } catch (e) {
    if (isStillReferenced(e)) throw (await inUse(ctx, pushId)) ?? conflict("push is used by scheduler(s)");
    throw e;
  }
}

// ---- preview ---------------------------------------------------------------------------------

type PreviewDevice = {
  external_id?: string | null;
  language?: string | null;
  country?: string | null;
  platform?: string | null;
  platform_name?: string | null;
  tz_sec?: number | null;
  tags?: Record<string, string> | null;
};
export type PreviewInput = { language?: string; device?: PreviewDevice; device_id?: number; at?: string; rotation?: number; seed?: number };

function previewInstant(ctx: CoreContext, at: string | undefined): Date {
  if (at === undefined) return ctx.now();
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(at) ? Date.parse(at) : NaN;
  if (Number.isNaN(ms)) throw badRequest("at must be an ISO 8601 instant, e.g. 2025-01-31T18:00:00Z");
  return new Date(ms);
}

async function previewDevice(ctx: CoreContext, push: PushRow, input: PreviewInput): Promise<RenderDevice> {
  if (input.device_id !== undefined) {
    if (input.device !== undefined) throw badRequest("give device or device_id, not both");
    const [d] = await ctx.db.select().from(devices).where(and(eq(devices.id, input.device_id), eq(devices.appId, push.appId)));
    if (!d) throw notFound("device");
    // the fields fanout.ts puts in a send job for this device
    return { external_id: d.externalId, language: d.language, country: d.country, platform: d.platform, platform_name: d.model, tz_sec: d.tzSec, tags: d.tags ?? {} };
  }
  const d = input.device ?? {};
  // normalised and checked as the device query's filters are (pt_br → pt-BR, us → US)
  const checked = checkDeviceFilters({ language: d.language || undefined, country: d.country || undefined }, "device.");
  return {
    external_id: d.external_id ?? null,
    language: checked.language ?? null,
    country: checked.country ?? null,
    platform: d.platform ?? null,
    platform_name: d.platform_name ?? null,
    tz_sec: d.tz_sec ?? null,
    tags: d.tags ?? {},
  };
}

/**
 * What a device would receive: the translation chosen as for a send, rendered as the dispatcher
 * renders a job (bindSend with the send's instant, rotation and app; render per device).
 * Without any language (none asked, none on the device) the default translation is rendered for a
 * device of the default language, so {Weekday} and {TimeOfDay} read in that language.
 */
export async function previewPush(ctx: CoreContext, actor: Actor, pushId: number, input: PreviewInput) {
  const push = await loadOwnPush(ctx, actor, pushId);
  let asked: string | null = null;
  if (input.language !== undefined) {
    asked = normalizeLanguage(input.language);
    if (!asked) throw badRequest("language must be a language code such as en or pt-BR");
  }
  const device = await previewDevice(ctx, push, input);
  const now = previewInstant(ctx, input.at);
  const want = asked ?? device.language ?? null;
  const chosen = pickTranslation(push, want);
  const [app] = await ctx.db.select({ id: apps.id, name: apps.name, appLink: apps.appLink }).from(apps).where(eq(apps.id, push.appId));
  if (!app) throw notFound("app");
  const send = { now, rotation: input.rotation ?? 0, app: { id: app.id, name: app.name, app_link: app.appLink } };
  const rng = input.seed === undefined ? fastRng : seededRng(input.seed);
  const renderDevice: RenderDevice = { ...device, language: device.language ?? asked ?? chosen.language };
  const t = chosen.translation;
  const field = (name: string) => `translations.${chosen.language}.${name}`;
  const run = (text: string, name: string) => {
    try {
      return bindSend(compile(text), send).render(renderDevice, rng);
    } catch (e) {
      // only a template written around the API (validated ones always render) gets here
      if (e instanceof TemplateError) throw badRequest(`${field(name)}: ${e.message}`);
      throw e;
    }
  };
  return {
    language: chosen.language,
    fallback: want !== null && !chosen.matched,
    title: run(t.title, "title"),
    // the dispatcher sends "" for a push without body
    body: t.body ? run(t.body, "body") : "",
    icon_url: t.icon_url,
    image_url: t.image_url,
    // as the dispatcher sends it: re-encoded as a URL, null when it renders to none
    click_url: t.click_url ? (t.click_url.includes("{") ? toClickUrl(run(t.click_url, "click_url")) : t.click_url) : null,
  };
}
