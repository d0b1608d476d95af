import { pgTable, bigserial, bigint, text, timestamp, integer, jsonb, boolean, index, uniqueIndex, primaryKey } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { apps } from "./apps";
import { devices } from "./devices";
import { packEventPushes, packLanguages, pushPacks } from "./packs";
import { schedulers } from "./pushes";

/**
 * Every event recorded on a device: postback conversions (`install`, `reg`, `dep`, `dep2`, custom) and
 * SDK events (lifecycle `onscreen`/`background`/`closed`, custom). `item_id` is the ingest item that
 * produced it: a redelivered item finds its row and changes nothing twice.
 */
export const deviceEvents = pgTable(
  "device_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    itemId: text("item_id").notNull(),
    deviceId: bigint("device_id", { mode: "number" }).notNull().references(() => devices.id, { onDelete: "cascade" }),
    appId: integer("app_id").notNull().references(() => apps.id, { onDelete: "cascade" }),
    /** As recorded: deposits carry their number (`dep3`). */
    code: text("code").notNull(),
    /** `postback` | `sdk` */
    source: text("source").notNull(),
    /** When the edge accepted it. */
    at: timestamp("at", { withTimezone: true }).notNull(),
    data: jsonb("data").$type<Record<string, unknown>>(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("device_events_item_device_uq").on(t.itemId, t.deviceId),
    index("device_events_device_idx").on(t.deviceId, t.id),
    index("device_events_app_idx").on(t.appId, t.id),
    // a deposit number exists once per device, whatever the concurrency (safety net under the row lock)
    uniqueIndex("device_events_deposit_uq").on(t.deviceId, t.code).where(sql`${t.code} ~ '^dep[0-9]*$'`),
  ],
);

/** SDK `delivered` / `clicked` reports; one per (device, message, kind), repeats are ignored. */
export const notificationEvents = pgTable(
  "notification_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    deviceId: bigint("device_id", { mode: "number" }).notNull().references(() => devices.id, { onDelete: "cascade" }),
    appId: integer("app_id").notNull().references(() => apps.id, { onDelete: "cascade" }),
    msgId: text("msg_id").notNull(),
    /** `delivered` | `clicked` */
    event: text("event").notNull(),
    at: timestamp("at", { withTimezone: true }).notNull(),
    /** Folded into send_stats_daily by the rollup (a flag, not an id watermark: ids commit out of order). */
    counted: boolean("counted").notNull().default(false),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("notification_events_uq").on(t.deviceId, t.msgId, t.event),
    index("notification_events_msg_idx").on(t.msgId),
    index("notification_events_uncounted_idx").on(t.id).where(sql`not ${t.counted}`),
  ],
);

/**
 * What must be sent, and when: the hand-off from ingest to the send orchestration (which owns
 * `status` from `pending` on). Rows are written in the transaction that records the event.
 * - `pack_event`: an event push of an attached pack whose `event_code` matches, due `delay_minutes` later,
 *   in the pack language chosen for the device.
 * - `scheduler`: an event-triggered Scheduler whose `event_code` matches, due `delay_minutes` after the event;
 *   written only while the owner's plan has the Event triggers feature (checked again when it is sent).
 */
export const triggerQueue = pgTable(
  "trigger_queue",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    kind: text("kind").notNull(),
    appId: integer("app_id").notNull().references(() => apps.id, { onDelete: "cascade" }),
    deviceId: bigint("device_id", { mode: "number" }).notNull().references(() => devices.id, { onDelete: "cascade" }),
    eventId: bigint("event_id", { mode: "number" }).notNull().references(() => deviceEvents.id, { onDelete: "cascade" }),
    eventCode: text("event_code").notNull(),
    packId: integer("pack_id").references(() => pushPacks.id, { onDelete: "cascade" }),
    languageId: integer("language_id").references(() => packLanguages.id, { onDelete: "cascade" }),
    eventPushId: integer("event_push_id").references(() => packEventPushes.id, { onDelete: "cascade" }),
    /** `scheduler` rows: the event-triggered scheduler to send, due `delay_minutes` after the event. */
    schedulerId: integer("scheduler_id").references(() => schedulers.id, { onDelete: "cascade" }),
    dueAt: timestamp("due_at", { withTimezone: true }).notNull(),
    /** `pending` until the sender takes it. */
    status: text("status").notNull().default("pending"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("trigger_queue_push_uq").on(t.eventId, t.eventPushId),
    uniqueIndex("trigger_queue_scheduler_uq").on(t.eventId, t.schedulerId).where(sql`${t.kind} = 'scheduler'`),
    index("trigger_queue_due_idx").on(t.status, t.dueAt),
  ],
);

/**
 * Events group: per app and recorded code (`dep3` as recorded), how many times it was recorded and on
 * how many devices. Kept by ingest, in the transaction that records the events, so listing reads no raw event.
 */
export const appEventStats = pgTable(
  "app_event_stats",
  {
    appId: integer("app_id").notNull().references(() => apps.id, { onDelete: "cascade" }),
    code: text("code").notNull(),
    count: bigint("count", { mode: "number" }).notNull().default(0),
    devices: bigint("devices", { mode: "number" }).notNull().default(0),
    firstAt: timestamp("first_at", { withTimezone: true }).notNull(),
    lastAt: timestamp("last_at", { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.appId, t.code] })],
);

/** Custom event codes an app declares (name, description); codes are accepted whether declared or not. */
export const appEventDefinitions = pgTable(
  "app_event_definitions",
  {
    appId: integer("app_id").notNull().references(() => apps.id, { onDelete: "cascade" }),
    code: text("code").notNull(),
    name: text("name"),
    description: text("description"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.appId, t.code] })],
);
