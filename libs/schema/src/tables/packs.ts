import { pgTable, serial, text, boolean, timestamp, integer, smallint, time, index, uniqueIndex, primaryKey } from "drizzle-orm/pg-core";
import { users } from "./accounts";
import { apps } from "./apps";

export const pushPacks = pgTable(
  "push_packs",
  {
    id: serial("id").primaryKey(),
    /** null for system packs */
    userId: integer("user_id").references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    fallbackLanguage: text("fallback_language").notNull(),
    isSystem: boolean("is_system").notNull(),
    isPublished: boolean("is_published").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("push_packs_user_idx").on(t.userId)],
);

export const packLanguages = pgTable(
  "pack_languages",
  {
    id: serial("id").primaryKey(),
    packId: integer("pack_id").notNull().references(() => pushPacks.id, { onDelete: "cascade" }),
    languageCode: text("language_code").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("pack_languages_pack_code_uq").on(t.packId, t.languageCode)],
);

const pushContent = () => ({
  title: text("title").notNull(),
  body: text("body"),
  iconUrl: text("icon_url"),
  clickUrl: text("click_url"),
  imageUrl: text("image_url"),
  audienceTag: text("audience_tag"),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

export const packScheduledPushes = pgTable(
  "pack_scheduled_pushes",
  {
    id: serial("id").primaryKey(),
    languageId: integer("language_id").notNull().references(() => packLanguages.id, { onDelete: "cascade" }),
    /** 0 = Monday .. 6 = Sunday */
    dayOfWeek: smallint("day_of_week").notNull(),
    sendTime: time("send_time").notNull(),
    ...pushContent(),
  },
  // the per-minute tick looks pushes up by (day, time)
  (t) => [index("pack_scheduled_slot_idx").on(t.dayOfWeek, t.sendTime), index("pack_scheduled_lang_idx").on(t.languageId)],
);

export const packEventPushes = pgTable(
  "pack_event_pushes",
  {
    id: serial("id").primaryKey(),
    languageId: integer("language_id").notNull().references(() => packLanguages.id, { onDelete: "cascade" }),
    eventCode: text("event_code").notNull(),
    delayMinutes: integer("delay_minutes").notNull().default(0),
    ...pushContent(),
  },
  (t) => [index("pack_event_code_idx").on(t.eventCode), index("pack_event_lang_idx").on(t.languageId)],
);

export const appPushPacks = pgTable(
  "app_push_packs",
  {
    appId: integer("app_id").notNull().references(() => apps.id, { onDelete: "cascade" }),
    packId: integer("pack_id").notNull().references(() => pushPacks.id, { onDelete: "cascade" }),
    attachedAt: timestamp("attached_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.appId, t.packId] }), index("app_push_packs_pack_idx").on(t.packId)],
);
