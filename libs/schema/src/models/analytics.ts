import { Type } from "@sinclair/typebox";

/**
 * Analytics group: Sent (dispatcher results), Failed, Delivered and Clicked (SDK reports, once per
 * recipient), CTR = clicked / delivered, read from daily aggregates (send_stats_daily).
 */

/** Where a send came from: a pack's weekly or event push, or a scheduler. */
export const ANALYTICS_SOURCES = ["pack_scheduled", "pack_event", "scheduler"] as const;

const Counts = {
  sent: Type.Integer({ description: "accepted by FCM, APNs or the push service" }),
  failed: Type.Integer({ description: "refused or not sent (invalid token, expired job, ...)" }),
  delivered: Type.Integer({ description: "reported delivered by the SDK (once per recipient)" }),
  clicked: Type.Integer({ description: "reported clicked by the SDK (once per recipient)" }),
  ctr: Type.Number({ description: "clicked / delivered, 4 decimals; 0 when nothing was delivered" }),
};

export const AnalyticsQuery = Type.Object({
  date_from: Type.Optional(Type.String({ description: "first UTC day, YYYY-MM-DD (inclusive)" })),
  date_to: Type.Optional(Type.String({ description: "last UTC day, YYYY-MM-DD (inclusive)" })),
  group_by: Type.Optional(Type.String({ description: "day (default) | push | pack | scheduler | template; app on the account and pack routes" })),
  source: Type.Optional(Type.String({ description: ANALYTICS_SOURCES.join(" | ") })),
  push_id: Type.Optional(Type.String({ description: "a pack push (scheduled or event)" })),
  pack_id: Type.Optional(Type.String()),
  scheduler_id: Type.Optional(Type.String()),
  template_id: Type.Optional(Type.String({ description: "a push template (Pushes group) sent by schedulers" })),
});

export const AccountAnalyticsQuery = Type.Composite([
  AnalyticsQuery,
  Type.Object({ app_id: Type.Optional(Type.String({ description: "one of the caller's apps" })) }),
]);

/** One group: the keys of its `group_by` (day; app_id; source and push_id, ...) and the counts. */
export const AnalyticsRow = Type.Object({
  day: Type.Optional(Type.String({ description: "group_by=day: YYYY-MM-DD (UTC day of the send)" })),
  app_id: Type.Optional(Type.Integer()),
  source: Type.Optional(Type.String({ description: ANALYTICS_SOURCES.join(" | ") })),
  push_id: Type.Optional(Type.Integer({ description: "group_by=push: the pack push, or the scheduler when source is scheduler" })),
  pack_id: Type.Optional(Type.Integer({ description: "0 when not from a pack" })),
  scheduler_id: Type.Optional(Type.Integer()),
  template_id: Type.Optional(Type.Integer({ description: "0 when not from a scheduler" })),
  ...Counts,
});

export const AnalyticsReport = Type.Object({
  app_id: Type.Optional(Type.Integer({ description: "the app, on the app route" })),
  pack_id: Type.Optional(Type.Integer({ description: "the pack, on the admin pack route" })),
  group_by: Type.String(),
  totals: Type.Object(Counts),
  rows: Type.Array(AnalyticsRow),
});
