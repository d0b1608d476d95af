import { pgTable, bigserial, text, timestamp, integer, jsonb, index, uniqueIndex } from "drizzle-orm/pg-core";
import { apps } from "./apps";

/**
 * The activity log of an app: every postback core processed, with what it did. `item_id` is the ingest
 * item: the row is written first in the item's transaction, so a redelivery finds it and stops.
 * The postback token is never stored.
 */
export const activityLog = pgTable(
  "activity_log",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    appId: integer("app_id").notNull().references(() => apps.id, { onDelete: "cascade" }),
    /** `postback` */
    kind: text("kind").notNull(),
    itemId: text("item_id").notNull(),
    /** When the edge accepted it. */
    at: timestamp("at", { withTimezone: true }).notNull(),
    ip: text("ip"),
    method: text("method"),
    externalId: text("external_id"),
    /** The event as sent (`dep`), before numbering. */
    event: text("event"),
    /** segment, webmaster, offer and any other parameter sent (token removed). */
    params: jsonb("params").$type<Record<string, string>>().notNull().default({}),
    /** `recorded` | `refused` | `skipped` */
    outcome: text("outcome").notNull().default("recorded"),
    message: text("message"),
    /** [{ device_id, event, created }]: the devices touched and the event as recorded on each. */
    devices: jsonb("devices").$type<Array<{ device_id: number; event: string | null; created: boolean }>>().notNull().default([]),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("activity_log_item_uq").on(t.itemId), index("activity_log_app_idx").on(t.appId, t.id)],
);
