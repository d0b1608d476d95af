import { pgTable, serial, text, timestamp, integer, smallint, time, jsonb, index } from "drizzle-orm/pg-core";
import { users } from "./accounts";
import { apps } from "./apps";

/** One language version of a push template; every field is templated text (operators and macros). */
export interface PushTranslation {
  title: string;
  body?: string | null;
  icon_url?: string | null;
  image_url?: string | null;
  click_url?: string | null;
}

/**
 * A push template ("Pushes" group): the content of a push in several languages, owned by one app.
 * A device gets the translation of its language (exact, then primary subtag), else `default_language`.
 */
export const pushTemplates = pgTable(
  "push_templates",
  {
    id: serial("id").primaryKey(),
    userId: integer("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    appId: integer("app_id").notNull().references(() => apps.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    defaultLanguage: text("default_language").notNull(),
    /** language code -> translation */
    translations: jsonb("translations").$type<Record<string, PushTranslation>>().notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("push_templates_app_idx").on(t.appId, t.id), index("push_templates_user_idx").on(t.userId)],
);

/** Audience filters of a scheduler: the device query's filters (all combined with AND). */
export interface SchedulerFilters {
  country?: string;
  language?: string;
  platform?: string;
  external_id?: string;
  events?: string[];
  tags?: Record<string, string>;
}

/**
 * A scheduler ("Schedulers" group) sends one push template to an app's audience:
 * `instant` (once, when created), `once` (at `send_at`), `weekly` (`days_of_week` at `send_time`, UTC),
 * `event` (to the device that recorded `event_code`, `delay_minutes` later; plan feature event_triggers).
 * `status`: `active`, `paused`, or `completed` (an instant or once scheduler that has sent).
 */
export const schedulers = pgTable(
  "schedulers",
  {
    id: serial("id").primaryKey(),
    userId: integer("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    appId: integer("app_id").notNull().references(() => apps.id, { onDelete: "cascade" }),
    /** A template in use cannot be deleted (409), so the reference is restrictive. */
    pushId: integer("push_id").notNull().references(() => pushTemplates.id, { onDelete: "restrict" }),
    name: text("name").notNull(),
    kind: text("kind").notNull(),
    status: text("status").notNull().default("active"),
    sendAt: timestamp("send_at", { withTimezone: true }),
    /** 0 = Monday .. 6 = Sunday, as pack schedules. */
    daysOfWeek: smallint("days_of_week").array(),
    sendTime: time("send_time"),
    eventCode: text("event_code"),
    delayMinutes: integer("delay_minutes").notNull().default(0),
    filters: jsonb("filters").$type<SchedulerFilters>().notNull().default({}),
    lastSentAt: timestamp("last_sent_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("schedulers_app_idx").on(t.appId, t.id),
    index("schedulers_kind_status_idx").on(t.kind, t.status),
    index("schedulers_event_idx").on(t.appId, t.eventCode),
  ],
);
