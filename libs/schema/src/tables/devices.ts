import { pgTable, bigserial, text, timestamp, integer, jsonb, boolean, index, uniqueIndex } from "drizzle-orm/pg-core";
import { apps } from "./apps";

/**
 * A device is an install: one per (app, install_token). Installs are counted per account across its
 * apps (billing, install caps). The edge-ingest issue owns the rest of the device model.
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
    country: text("country"),
    language: text("language"),
    model: text("model"),
    tzSec: integer("tz_sec"),
    tags: jsonb("tags").$type<Record<string, string>>().notNull().default({}),
    transportType: text("transport_type"),
    transportToken: text("transport_token"),
    /** Set when a transport answered that the token is gone: it is not sent to again. */
    tokenInvalid: boolean("token_invalid").notNull().default(false),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    lastActiveAt: timestamp("last_active_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("devices_app_install_uq").on(t.appId, t.installToken),
    index("devices_app_external_idx").on(t.appId, t.externalId),
  ],
);
