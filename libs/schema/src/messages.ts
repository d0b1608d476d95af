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

// ---- edge ingest (postbacks, SDK traffic) --------------------------------------------------------

/** Streams and subjects of the edge ingest path (logical: the bus adds the deployment prefix). */
export const IngestSubjects = {
  /** JetStream work-queue stream the edge publishes accepted postbacks and SDK events to. */
  stream: "INGEST",
  streamSubjects: ["ingest.>"],
  /** One stream message = one IngestBatch (group commit: many requests, one stored message). */
  batch: "ingest.batch",
  /** Durable consumer of core. */
  consumer: "core-ingest",
  /** Request-reply: the SDK registration (needs the database for `id` and `just_created`). */
  register: "core.instances.register",
  /** Request-reply: an app the edge's directory does not know (yet). */
  appLookup: "core.apps.lookup",
} as const;

const Str = (max: number) => Type.String({ maxLength: max });
const OptStr = (max: number) => Type.Union([Type.String({ maxLength: max }), Type.Null()]);

/** Common to every item: a unique id (idempotency key in core), the edge's acceptance time, the app. */
const ItemBase = {
  id: Type.String({ minLength: 1, maxLength: 80 }),
  at: Type.String({ format: "date-time" }),
  app_id: Type.Integer({ minimum: 1 }),
};

/** A postback the edge accepted (identifier present; the checks of the spec passed). */
export const IngestPostback = Type.Object({
  kind: Type.Literal("postback"),
  ...ItemBase,
  ip: OptStr(64),
  method: Type.Union([Type.Literal("GET"), Type.Literal("POST")]),
  /** First non-empty of external_id, install_id, gaid, idfa. */
  external_id: Str(255),
  event: OptStr(64),
  /** segment, webmaster, offer: stored as device tags. */
  tags: Type.Record(Type.String(), Str(255)),
  /** Every other parameter as sent, for the activity log (token removed). */
  params: Type.Record(Type.String(), Str(1024)),
});
export type IngestPostback = Static<typeof IngestPostback>;

/** SDK `PUT .../instances/{ic_id}/info`, validated by the edge (platform/transport pairing included). */
export const IngestInfo = Type.Object({
  kind: Type.Literal("info"),
  ...ItemBase,
  device_id: Type.Integer({ minimum: 1 }),
  platform: Type.String(),
  // absent = leave as is, null = clear
  transport_type: Type.Optional(OptStr(16)),
  transport_token: Type.Optional(OptStr(8192)),
  language: Type.Optional(OptStr(35)),
  country: Type.Optional(OptStr(2)),
  tz_sec: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  model: Type.Optional(OptStr(255)),
  ext_id: Type.Optional(OptStr(255)),
  /** Merged into the device's tags; an empty value removes the tag. */
  tags: Type.Optional(Type.Union([Type.Record(Type.String(), Str(255)), Type.Null()])),
});
export type IngestInfo = Static<typeof IngestInfo>;

/** SDK `delivered` / `clicked` report. */
export const IngestNotification = Type.Object({
  kind: Type.Literal("notification"),
  ...ItemBase,
  device_id: Type.Integer({ minimum: 1 }),
  msg_id: Str(255),
  event: Type.Union([Type.Literal("delivered"), Type.Literal("clicked")]),
});
export type IngestNotification = Static<typeof IngestNotification>;

/** SDK lifecycle (`onscreen`, `background`, `closed`) or custom event. */
export const IngestSdkEvent = Type.Object({
  kind: Type.Literal("sdk_event"),
  ...ItemBase,
  device_id: Type.Integer({ minimum: 1 }),
  event: Str(64),
  data: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
});
export type IngestSdkEvent = Static<typeof IngestSdkEvent>;

export const IngestItem = Type.Union([IngestPostback, IngestInfo, IngestNotification, IngestSdkEvent]);
export type IngestItem = Static<typeof IngestItem>;

/** One stream message. Items are independent: core applies each idempotently by its id. */
export const IngestBatch = Type.Object({ v: Type.Literal(1), items: Type.Array(Type.Unknown()) });
export type IngestBatch = { v: 1; items: IngestItem[] };

/** Edge → core: SDK registration. */
export const RegisterRequest = Type.Object({
  app_id: Type.Integer({ minimum: 1 }),
  ic_token: Type.String({ minLength: 1, maxLength: 255 }),
  ext_id: OptStr(255),
  at: Type.String({ format: "date-time" }),
});
export type RegisterRequest = Static<typeof RegisterRequest>;
/** Core → edge: the device id (the edge turns it into the signed instance id) or an HTTP error to relay. */
export type RegisterReply = { ok: true; device_id: number; just_created: boolean } | { ok: false; status: number; error: string };

/** Edge → core: is there such an app (just created, not yet seen in the directory)? */
export const AppLookupRequest = Type.Object({ app_id: Type.Integer({ minimum: 1 }) });
export type AppLookupRequest = Static<typeof AppLookupRequest>;
export type AppLookupReply = { entry: AppDirectoryEntry | null };
