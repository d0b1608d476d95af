import { Type, type TSchema } from "@sinclair/typebox";
import { Nullable, Timestamp } from "./common";
import { DeviceQueryBody } from "./devices";

/**
 * Schedulers ("Schedulers" group): send one push template (Pushes group) to an app's audience
 * `instant`ly, `once` at a time, `weekly`, or on an `event`; the audience is narrowed by the device
 * query's filters.
 */

/** The filter names (the device query's). */
export const SCHEDULER_FILTER_KEYS = ["country", "language", "platform", "external_id", "events", "tags"] as const;

export const SCHEDULER_TYPES = ["instant", "once", "weekly", "event"] as const;
export type SchedulerType = (typeof SCHEDULER_TYPES)[number];

/** The longest `delay_minutes` of an event scheduler: 30 days. */
export const MAX_SCHEDULER_DELAY_MINUTES = 43200;

/** The device query's filter schema with its message naming `filters.<field>`. */
function asFilter<T extends TSchema>(s: T): T {
  const error = (s as { error?: unknown }).error;
  return (typeof error === "string" ? { ...s, error: `filters.${error}` } : s) as T;
}
const q = DeviceQueryBody.properties;

export const SchedulerFiltersBody = Type.Object(
  {
    country: asFilter(q.country),
    language: asFilter(q.language),
    platform: asFilter(q.platform),
    external_id: asFilter(q.external_id),
    events: asFilter(q.events),
    tags: asFilter(q.tags),
  },
  {
    // unknown keys are kept, so the service can refuse them: stripping `{segment: "vip"}` would send to everyone
    additionalProperties: true,
    error: "filters must be an object with any of country, language, platform, external_id, events, tags",
    description: "The device query's filters, combined with AND: `country` (ISO code), `language` (`en` also matches `en-US`), `platform`, `external_id`, `events` (the device has them all), `tags` (all match).",
  },
);

const Name = Type.String({ minLength: 1, maxLength: 255, error: "name is required: 1 to 255 characters" });
const PushId = Type.Integer({ minimum: 1, maximum: 2147483647, error: "push_id is required: the id of a push template of the app" });
const SendAt = Type.String({ maxLength: 40, error: "send_at must be an ISO 8601 date-time with a time zone, e.g. 2025-01-31T18:00:00Z", description: "`once`: when to send (ISO 8601, in the future, at most a year ahead); sent in that minute" });
const DAYS_ERROR = "days_of_week must be a non-empty array of distinct days 0 (Mon) to 6 (Sun)";
const DaysOfWeek = Type.Array(Type.Integer({ minimum: 0, maximum: 6, error: DAYS_ERROR }), {
  minItems: 1,
  maxItems: 7,
  uniqueItems: true,
  error: DAYS_ERROR,
  description: "`weekly`: days, 0 = Monday .. 6 = Sunday",
});
const SendTime = Type.String({ pattern: "^([01][0-9]|2[0-3]):[0-5][0-9]$", error: "send_time must be HH:MM between 00:00 and 23:59 (UTC)", description: "`weekly`: HH:MM, UTC" });
const EventCode = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: "^[A-Za-z0-9_.:-]+$",
  error: "event_code must be 1 to 64 characters of letters, digits, _ . : -",
  description: "`event`: the code as recorded (`dep3` fires on the third deposit only)",
});
const DelayMinutes = Type.Integer({
  minimum: 0,
  maximum: MAX_SCHEDULER_DELAY_MINUTES,
  error: `delay_minutes must be an integer 0 to ${MAX_SCHEDULER_DELAY_MINUTES}`,
  description: "`event`: minutes after the event (default 0)",
});

/** The schedule and audience fields, the same on create and update (which of them a type takes is the service's rule). */
const scheduleFields = {
  send_at: Type.Optional(SendAt),
  days_of_week: Type.Optional(DaysOfWeek),
  send_time: Type.Optional(SendTime),
  event_code: Type.Optional(EventCode),
  delay_minutes: Type.Optional(DelayMinutes),
  filters: Type.Optional(SchedulerFiltersBody),
};

export const CreateSchedulerBody = Type.Object({
  app_id: Type.Integer({ minimum: 1, maximum: 2147483647, error: "app_id is required and must be a positive integer" }),
  push_id: PushId,
  name: Name,
  type: Type.Union(
    SCHEDULER_TYPES.map((x) => Type.Literal(x)),
    { error: "type is required: one of instant, once, weekly, event", description: "`instant` sends when created; `once` at `send_at`; `weekly` on `days_of_week` at `send_time` (UTC); `event` to the device that records `event_code`, `delay_minutes` later (Pro plan or above)" },
  ),
  ...scheduleFields,
}, { additionalProperties: true }); // unknown fields are refused by the service (a mistyped `filters` must not send to everyone)

export const UpdateSchedulerBody = Type.Object({
  name: Type.Optional(Name),
  push_id: Type.Optional(PushId),
  ...scheduleFields,
  status: Type.Optional(
    Type.Union([Type.Literal("active"), Type.Literal("paused")], {
      error: "status must be active or paused",
      description: "`paused` stops the scheduler (and a send of it still fanning out); `active` resumes it",
    }),
  ),
}, { additionalProperties: true });

export const SendSchedulerBody = Type.Object({
  device_id: Type.Optional(
    Type.Integer({ minimum: 1, error: "device_id must be the id of a device of the app", description: "A test send: only this device of the app, whatever the filters" }),
  ),
});

export const SchedulerObject = Type.Object({
  id: Type.Integer(),
  app_id: Type.Integer(),
  push_id: Type.Integer({ description: "The push template sent" }),
  name: Type.String(),
  type: Type.String({ description: "instant | once | weekly | event" }),
  status: Type.String({ description: "active | paused | completed (an instant or once scheduler that has sent) | missed (a once scheduler the service could not send within 10 minutes of send_at, e.g. while it was down)" }),
  send_at: Nullable(Timestamp),
  days_of_week: Nullable(Type.Array(Type.Integer())),
  send_time: Nullable(Type.String({ description: "HH:MM, UTC" })),
  event_code: Nullable(Type.String()),
  delay_minutes: Type.Integer(),
  filters: SchedulerFiltersBody,
  last_sent_at: Nullable(Timestamp),
  next_run_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const SchedulerList = Type.Object({ items: Type.Array(SchedulerObject), next_cursor: Nullable(Type.String()) });

export const SchedulerSent = Type.Object({
  send_id: Type.Integer({ description: "The send; its recipients' msg_id start with `<send_id>.`" }),
  scheduler: SchedulerObject,
});
