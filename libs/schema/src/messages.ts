import { Type, type Static } from "@sinclair/typebox";

/**
 * Messages that cross the bus. Subjects are logical (the bus adds the deployment prefix).
 */
export const Subjects = {
  /** KV bucket that core keeps current and edges read: one entry per app, key = app id. */
  appDirectoryBucket: "app_directory",
} as const;

/** What an edge needs to know about an app without a database. */
export const AppDirectoryEntry = Type.Object({
  id: Type.Integer(),
  user_id: Type.Integer(),
  archived: Type.Boolean(),
  postback_token: Type.String(),
  platform: Type.String(),
  plan: Type.String(),
  subscription_status: Type.String(),
  updated_at: Type.String(),
});
export type AppDirectoryEntry = Static<typeof AppDirectoryEntry>;
