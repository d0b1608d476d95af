import { pgTable, bigserial, text, timestamp, integer, jsonb, boolean, index, uniqueIndex } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { apps } from "./apps";

/**
 * A device is an install: one per (app, install_token). Installs are counted per account across its
 * apps (billing, install caps). Written only by core: server-side registration, the SDK registration
 * responder and the ingest consumer (postbacks, SDK info and events).
 */
export const devices = pgTable(
  "devices",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    appId: integer("app_id").notNull().references(() => apps.id, { onDelete: "cascade" }),
    /** SDK `ic_token`, or `srv_<external_id>` for server-side and postback registrations. */
    installToken: text("install_token").notNull(),
    externalId: text("external_id"),
    platform: text("platform"),
    /** ISO 3166-1 alpha-2, upper case. */
    country: text("country"),
    /** BCP 47-ish, normalised: primary subtag lower case, region upper case (`pt-BR`). */
    language: text("language"),
    model: text("model"),
    tzSec: integer("tz_sec"),
    tags: jsonb("tags").$type<Record<string, string>>().notNull().default({}),
    transportType: text("transport_type"),
    transportToken: text("transport_token"),
    /** Set when a transport answered that the token is gone: it is not sent to again. */
    tokenInvalid: boolean("token_invalid").notNull().default(false),
    /** Distinct recorded event codes, oldest first (deposits numbered `dep`, `dep2`, ...). */
    events: text("events").array().notNull().default(sql`'{}'::text[]`),
    /** Deposits recorded so far; the next one is `dep${deposits + 1}` (row-locked while numbering). */
    deposits: integer("deposits").notNull().default(0),
    /** How the device came to be: `sdk`, `server` or `postback`. */
    source: text("source").notNull().default("sdk"),
    /** Edge time of the SDK info last applied: an older info delivered late does not overwrite a newer one. */
    infoAt: timestamp("info_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    lastActiveAt: timestamp("last_active_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("devices_app_install_uq").on(t.appId, t.installToken),
    index("devices_app_external_idx").on(t.appId, t.externalId),
    // the device query: keyset on id within an app, optionally narrowed by one equality filter
    index("devices_app_id_idx").on(t.appId, t.id),
    index("devices_app_country_idx").on(t.appId, t.country, t.id),
    index("devices_app_language_idx").on(t.appId, t.language, t.id),
    index("devices_app_platform_idx").on(t.appId, t.platform, t.id),
    // containment filters: tags @> {...}, events @> array[...]
    index("devices_tags_gin").using("gin", t.tags.op("jsonb_path_ops")),
    index("devices_events_gin").using("gin", t.events),
  ],
);
