import { Type } from "@sinclair/typebox";
import { Nullable, Timestamp } from "./common";

const LanguageCode = Type.String({
  pattern: "^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$",
  error: "language code must look like en, pt or pt-BR",
});

export const PackBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255, error: "name must be 1 to 255 characters" }),
  fallback_language: LanguageCode,
});

export const PublishBody = Type.Object({ is_published: Type.Boolean({ error: "is_published is required and must be a boolean" }) });
export const LanguageBody = Type.Object({ language_code: LanguageCode });
export const AttachBody = Type.Object({ pack_id: Type.Integer({ minimum: 1, error: "pack_id must be a positive integer" }) });

const OptUrl = (name: string) => Type.Optional(Nullable(Type.String({ maxLength: 2048, error: `${name} must be at most 2048 characters` })));

const content = {
  title: Type.String({ minLength: 1, maxLength: 255, error: "title is required, 1 to 255 characters" }),
  body: Type.Optional(Nullable(Type.String({ maxLength: 2000, error: "body must be at most 2000 characters" }))),
  icon_url: OptUrl("icon_url"),
  click_url: OptUrl("click_url"),
  image_url: OptUrl("image_url"),
  audience_tag: Type.Optional(Nullable(Type.String({ maxLength: 255, error: "audience_tag must be at most 255 characters" }))),
};

export const ScheduledPushBody = Type.Object({
  day_of_week: Type.Integer({ minimum: 0, maximum: 6, error: "day_of_week must be an integer 0 (Mon) to 6 (Sun)" }),
  send_time: Type.String({ pattern: "^([01][0-9]|2[0-3]):[0-5][0-9]$", error: "send_time must be HH:MM between 00:00 and 23:59 (UTC)" }),
  ...content,
});

export const EventPushBody = Type.Object({
  event_code: Type.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9_.:-]+$", error: "event_code is required: 1 to 64 characters of letters, digits, _ . : -" }),
  delay_minutes: Type.Optional(Type.Integer({ minimum: 0, maximum: 525600, error: "delay_minutes must be an integer 0 to 525600" })),
  ...content,
});

export const PackObject = Type.Object({
  id: Type.Integer(),
  user_id: Nullable(Type.Integer()),
  name: Type.String(),
  fallback_language: Type.String(),
  is_system: Type.Boolean(),
  is_published: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const PackLanguageObject = Type.Object({ id: Type.Integer(), pack_id: Type.Integer(), language_code: Type.String(), created_at: Timestamp });

const contentOut = {
  title: Type.String(),
  body: Nullable(Type.String()),
  icon_url: Nullable(Type.String()),
  click_url: Nullable(Type.String()),
  image_url: Nullable(Type.String()),
  audience_tag: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const ScheduledPushObject = Type.Object({
  id: Type.Integer(),
  language_id: Type.Integer(),
  day_of_week: Type.Integer(),
  send_time: Type.String({ description: "HH:MM:SS, UTC" }),
  ...contentOut,
});

export const EventPushObject = Type.Object({
  id: Type.Integer(),
  language_id: Type.Integer(),
  event_code: Type.String(),
  delay_minutes: Type.Integer(),
  ...contentOut,
});

export const AttachmentObject = Type.Composite([PackObject, Type.Object({ app_id: Type.Integer(), attached_at: Timestamp })]);
