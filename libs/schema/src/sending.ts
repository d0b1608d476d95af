import { Type, type Static } from "@sinclair/typebox";

/**
 * Core → dispatcher → core. Core decides what is sent to whom (one job = one push variant for up to
 * SEND_JOB_MAX_RECIPIENTS devices of one app and one transport); the dispatcher renders per recipient and
 * delivers; results come back in batches. The dispatcher has no database: a job carries what rendering
 * needs, and transport credentials come from the KV bucket `app_credentials` (sealed with MASTER_KEY),
 * cached by `credentials_version`.
 */
export const SendSubjects = {
  /** Stream SEND: jobs per transport, so dispatchers can scale or pause a transport. */
  stream: "SEND",
  job: (transport: string) => `send.job.${transport}`,
  jobs: "send.job.>",
  /** Stream SEND_RESULTS: per-recipient outcomes for core. */
  resultsStream: "SEND_RESULTS",
  results: "send.results",
  credentialsBucket: "app_credentials",
} as const;

export const SEND_JOB_MAX_RECIPIENTS = 500;

export const Transport = Type.Union([Type.Literal("fcm"), Type.Literal("apns"), Type.Literal("webpush")]);

export const SendRecipient = Type.Object({
  device_id: Type.Number(),
  /** Unique per (send, device); comes back in the SDK's delivered/clicked reports. */
  msg_id: Type.String(),
  /** FCM registration token, APNs device token (hex), or Web Push subscription JSON. */
  token: Type.String(),
  external_id: Type.Union([Type.String(), Type.Null()]),
  language: Type.Union([Type.String(), Type.Null()]),
  country: Type.Union([Type.String(), Type.Null()]),
  platform: Type.Union([Type.String(), Type.Null()]),
  platform_name: Type.Union([Type.String(), Type.Null()]),
  tz_sec: Type.Union([Type.Number(), Type.Null()]),
  tags: Type.Record(Type.String(), Type.String()),
});
export type SendRecipient = Static<typeof SendRecipient>;

export const SendJob = Type.Object({
  job_id: Type.String(),
  /** The send this job is part of (one push fired once), for analytics. */
  send_id: Type.String(),
  transport: Transport,
  app: Type.Object({ id: Type.Number(), name: Type.String(), app_link: Type.Union([Type.String(), Type.Null()]) }),
  credentials_version: Type.Number(),
  push: Type.Object({
    /** e.g. "pack_scheduled", "pack_event", "scheduler" */
    source: Type.String(),
    source_id: Type.Number(),
    title: Type.String(),
    body: Type.Union([Type.String(), Type.Null()]),
    icon_url: Type.Union([Type.String(), Type.Null()]),
    image_url: Type.Union([Type.String(), Type.Null()]),
    click_url: Type.Union([Type.String(), Type.Null()]),
  }),
  /** Static operators use `now` (UTC date) and `rotation` ({Push={A|B}}), the same for every recipient. */
  render: Type.Object({ now: Type.String(), rotation: Type.Number() }),
  /** The push is not sent after this instant (a job stuck in a queue must not arrive hours late). */
  expires_at: Type.Union([Type.String(), Type.Null()]),
  recipients: Type.Array(SendRecipient, { maxItems: SEND_JOB_MAX_RECIPIENTS }),
});
export type SendJob = Static<typeof SendJob>;

export const RecipientResult = Type.Object({
  device_id: Type.Number(),
  msg_id: Type.String(),
  status: Type.Union([Type.Literal("sent"), Type.Literal("failed"), Type.Literal("token_invalid"), Type.Literal("expired")]),
  reason: Type.Optional(Type.String()),
});
export type RecipientResult = Static<typeof RecipientResult>;

export const SendResults = Type.Object({
  job_id: Type.String(),
  send_id: Type.String(),
  app_id: Type.Number(),
  results: Type.Array(RecipientResult),
});
export type SendResults = Static<typeof SendResults>;

/** KV `app_credentials`, key = app id: the whole value sealed (AES-256-GCM, MASTER_KEY). */
export const AppCredentialsEntry = Type.Object({
  app_id: Type.Number(),
  version: Type.Number(),
  fcm: Type.Union([Type.Object({ project_id: Type.String(), client_email: Type.String(), private_key: Type.String() }), Type.Null()]),
  apns: Type.Union([
    Type.Object({ key_p8: Type.String(), key_id: Type.String(), team_id: Type.String(), bundle_id: Type.String(), production: Type.Boolean() }),
    Type.Null(),
  ]),
  webpush: Type.Object({ public_key: Type.String(), private_key: Type.String(), subject: Type.String() }),
});
export type AppCredentialsEntry = Static<typeof AppCredentialsEntry>;
