import type { pushPacks, packLanguages, packScheduledPushes, packEventPushes } from "@pushstack/schema";

export const MASK = "***";

export const packView = (p: typeof pushPacks.$inferSelect) => ({
  id: p.id,
  user_id: p.userId,
  name: p.name,
  fallback_language: p.fallbackLanguage,
  is_system: p.isSystem,
  is_published: p.isPublished,
  created_at: p.createdAt.toISOString(),
  updated_at: p.updatedAt.toISOString(),
});

export const languageView = (l: typeof packLanguages.$inferSelect) => ({
  id: l.id,
  pack_id: l.packId,
  language_code: l.languageCode,
  created_at: l.createdAt.toISOString(),
});

type Content = Pick<typeof packScheduledPushes.$inferSelect, "title" | "body" | "iconUrl" | "clickUrl" | "imageUrl" | "audienceTag" | "createdAt" | "updatedAt">;

/** System pack texts are the administrators' work: other callers see that a text exists, not the text. */
const content = (c: Content, masked: boolean) => ({
  title: masked ? MASK : c.title,
  body: masked && c.body !== null ? MASK : c.body,
  icon_url: c.iconUrl,
  click_url: c.clickUrl,
  image_url: c.imageUrl,
  audience_tag: c.audienceTag,
  created_at: c.createdAt.toISOString(),
  updated_at: c.updatedAt.toISOString(),
});

export const scheduledView = (s: typeof packScheduledPushes.$inferSelect, masked = false) => ({
  id: s.id,
  language_id: s.languageId,
  day_of_week: s.dayOfWeek,
  send_time: s.sendTime.length === 5 ? s.sendTime + ":00" : s.sendTime,
  ...content(s, masked),
});

export const eventView = (e: typeof packEventPushes.$inferSelect, masked = false) => ({
  id: e.id,
  language_id: e.languageId,
  event_code: e.eventCode,
  delay_minutes: e.delayMinutes,
  ...content(e, masked),
});
