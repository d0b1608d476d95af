import { pgTable, bigserial, bigint, text, timestamp, integer, jsonb, index, uniqueIndex } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { apps } from "./apps";
import { devices } from "./devices";
import { packEventPushes, packLanguages, pushPacks } from "./packs";

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
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("notification_events_uq").on(t.deviceId, t.msgId, t.event), index("notification_events_msg_idx").on(t.msgId)],
);

/**
 * What must be sent, and when: the hand-off from ingest to the send orchestration (which owns
 * `status` from `pending` on). Rows are written in the transaction that records the event.
 * - `pack_event`: an event push of an attached pack whose `event_code` matches, due `delay_minutes` later,
 *   in the pack language chosen for the device.
 * - `conversion`: every recorded event, due at once, for event-triggered Schedulers and webhooks
 *   (their plan gating happens where they are matched).
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
    dueAt: timestamp("due_at", { withTimezone: true }).notNull(),
    /** `pending` until the sender takes it. */
    status: text("status").notNull().default("pending"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("trigger_queue_push_uq").on(t.eventId, t.eventPushId),
    uniqueIndex("trigger_queue_conversion_uq").on(t.eventId).where(sql`${t.kind} = 'conversion'`),
    index("trigger_queue_due_idx").on(t.status, t.dueAt),
  ],
);
