import { pgTable, bigserial, bigint, text, timestamp, integer, date, index, uniqueIndex, primaryKey } from "drizzle-orm/pg-core";
import { apps } from "./apps";

/**
 * One push fired once (a scheduled pack push for one app and one minute, one event trigger, ...).
 * `send_key` makes the firing exactly-once: `sched:<push>:<app>:<minute>` or `event:<trigger_queue id>`;
 * every replica inserts it with ON CONFLICT DO NOTHING and only the inserter fans out.
 * Fan-out walks the audience by device id (keyset) and records `cursor` after each page, so a
 * fan-out interrupted by a crash resumes where it stopped (job ids are deterministic per page).
 */
export const sends = pgTable(
  "sends",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    sendKey: text("send_key").notNull(),
    appId: integer("app_id").notNull().references(() => apps.id, { onDelete: "cascade" }),
    /** `pack_scheduled` | `pack_event` | `scheduler` */
    source: text("source").notNull(),
    sourceId: integer("source_id").notNull(),
    packId: integer("pack_id"),
    /** `scheduler` sends: the push template sent (a scheduler may be re-pointed later). */
    templateId: integer("template_id"),
    /** The audience: `{ language_id, pack_id, audience_tag }` or `{ device_id }`. */
    audience: text("audience").notNull(),
    /** The UTC day the send counts for in analytics. */
    day: date("day", { mode: "string" }).notNull(),
    renderAt: timestamp("render_at", { withTimezone: true }).notNull(),
    rotation: integer("rotation").notNull().default(0),
    expiresAt: timestamp("expires_at", { withTimezone: true }),
    /** `fanning` until the last page is published, then `done`; `cancelled` when the app or account was paused mid-way. */
    status: text("status").notNull().default("fanning"),
    /** Last device id handed to the dispatcher. */
    cursor: bigint("cursor", { mode: "number" }).notNull().default(0),
    jobs: integer("jobs").notNull().default(0),
    recipients: integer("recipients").notNull().default(0),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("sends_key_uq").on(t.sendKey), index("sends_status_idx").on(t.status), index("sends_app_day_idx").on(t.appId, t.day)],
);

/** `{Push={A|B|C}}`: the rotation index of a push, advanced once per send (in the send's transaction). */
export const pushRotations = pgTable(
  "push_rotations",
  { source: text("source").notNull(), sourceId: integer("source_id").notNull(), counter: integer("counter").notNull().default(0) },
  (t) => [primaryKey({ columns: [t.source, t.sourceId] })],
);

/**
 * Analytics, aggregated: one row per (app, day, source, push, template); `pack_id` 0 when not from a pack,
 * `template_id` 0 when not from a Scheduler (a Scheduler switched to another template mid-day keeps two rows).
 * `sent`/`failed` come from dispatcher results, `delivered`/`clicked` from SDK reports rolled up by
 * the `sending-rollup` job; reading never scans raw events.
 */
export const sendStatsDaily = pgTable(
  "send_stats_daily",
  {
    appId: integer("app_id").notNull().references(() => apps.id, { onDelete: "cascade" }),
    day: date("day", { mode: "string" }).notNull(),
    source: text("source").notNull(),
    sourceId: integer("source_id").notNull(),
    packId: integer("pack_id").notNull().default(0),
    /** push template of a scheduler send; 0 otherwise */
    templateId: integer("template_id").notNull().default(0),
    sent: bigint("sent", { mode: "number" }).notNull().default(0),
    failed: bigint("failed", { mode: "number" }).notNull().default(0),
    delivered: bigint("delivered", { mode: "number" }).notNull().default(0),
    clicked: bigint("clicked", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.appId, t.day, t.source, t.sourceId, t.templateId] }), index("send_stats_pack_idx").on(t.packId, t.day)],
);

/** Results messages already counted (a redelivered results message counts once). */
export const sendJobResults = pgTable("send_job_results", {
  jobId: text("job_id").primaryKey(),
  at: timestamp("at", { withTimezone: true }).notNull().defaultNow(),
});

/** Named watermarks: `schedule-tick` (last minute ticked, epoch minutes). */
export const sendingMarks = pgTable("sending_marks", {
  name: text("name").primaryKey(),
  value: bigint("value", { mode: "number" }).notNull(),
});
