import { pgTable, serial, text, boolean, timestamp, integer, index } from "drizzle-orm/pg-core";
import { users } from "./accounts";

export const apps = pgTable(
  "apps",
  {
    id: serial("id").primaryKey(),
    userId: integer("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    platform: text("platform").notNull(),
    postbackToken: text("postback_token").notNull(),
    appLink: text("app_link"),
    archived: boolean("archived").notNull().default(false),
    vapidPublicKey: text("vapid_public_key").notNull(),
    /** AES-256-GCM sealed (see apps/core crypto); never leaves core in clear. */
    vapidPrivateKeyEnc: text("vapid_private_key_enc").notNull(),
    fcmCredentialsEnc: text("fcm_credentials_enc"),
    /** Non-secret FCM facts for display: project id, client e-mail. */
    fcmProjectId: text("fcm_project_id"),
    fcmClientEmail: text("fcm_client_email"),
    apnsKeyEnc: text("apns_key_enc"),
    apnsKeyId: text("apns_key_id"),
    apnsTeamId: text("apns_team_id"),
    apnsBundleId: text("apns_bundle_id"),
    apnsProduction: boolean("apns_production"),
    /** Bumped whenever a credential changes, so dispatchers drop cached clients. */
    credentialsVersion: integer("credentials_version").notNull().default(1),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("apps_user_idx").on(t.userId)],
);
