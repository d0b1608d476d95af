import { Type, type TSchema } from "@sinclair/typebox";
import { Nullable, Timestamp } from "./common";

/** Nullable that keeps the inner schema's message (a failing union reports against itself). */
const orNull = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()], { error: (s as { error?: string }).error });

/**
 * Devices as the API sees them: the SDK registration API (served by the edge), server-side
 * registration and the device query (core), and the rules both sides apply to device data.
 */

export const PlatformType = Type.Union([Type.Literal("android"), Type.Literal("ios"), Type.Literal("web")], {
  error: "platform_type must be one of android, ios, web",
});
export const TransportType = Type.Union([Type.Literal("fcm"), Type.Literal("apns"), Type.Literal("webpush")], {
  error: "transport_type must be one of fcm, apns, webpush",
});
/** The one transport each platform uses. */
export const TRANSPORT_OF = { android: "fcm", ios: "apns", web: "webpush" } as const;
export type DevicePlatform = keyof typeof TRANSPORT_OF;

const EVENT_CODE = "^[A-Za-z0-9_.:-]{1,64}$";
/** Event codes: the charset of event push `event_code`s, so any recorded event can trigger one. */
export const EventCodePattern = new RegExp(EVENT_CODE);
export const EventCode = Type.String({ pattern: EVENT_CODE, error: "event must be 1 to 64 characters of letters, digits, _ . : -" });
/** `dep`, `dep2`, ... (and `depN` as sent): deposits, numbered per device by core. */
export const isDeposit = (code: string) => /^dep[0-9]*$/.test(code);
/** SDK lifecycle events (recorded like custom events; they also mark the device active). */
export const LIFECYCLE_EVENTS = ["onscreen", "background", "closed"] as const;

const TAG_KEY = "^[A-Za-z0-9_.:-]{1,64}$";
export const Tags = Type.Record(Type.String({ pattern: TAG_KEY }), Type.String({ maxLength: 255 }), {
  additionalProperties: false,
  maxProperties: 50,
  error: "tags must be an object of at most 50 string values (keys: 1 to 64 letters, digits, _ . : -; values: at most 255 characters)",
});

const Country = Type.String({ maxLength: 2, error: "country must be a 2-letter ISO 3166-1 code" });
const Language = Type.String({ maxLength: 35, error: "language must be a language code such as en or pt-BR" });
const TzSec = Type.Integer({ minimum: -43200, maximum: 50400, error: "tz_sec must be an integer offset in seconds between -43200 and 50400" });
const Model = Type.String({ maxLength: 255, error: "model must be at most 255 characters" });
const WebPushSubscription = Type.Object(
  { endpoint: Type.String({ maxLength: 2048 }), keys: Type.Object({ p256dh: Type.String({ maxLength: 256 }), auth: Type.String({ maxLength: 256 }) }) },
  { additionalProperties: true },
);
const TransportToken = orNull(
  Type.Union([Type.String({ maxLength: 4096 }), WebPushSubscription], {
    error: "transport_token must be a string (FCM or APNs token; a web push subscription as JSON) or a web push subscription object",
  }),
);

// ---- SDK registration API (edge) ----------------------------------------------------------------

export const InstanceRegisterBody = Type.Object({
  ic_token: Type.String({ minLength: 1, maxLength: 255, error: "ic_token is required: 1 to 255 characters" }),
  ext_id: Type.Optional(orNull(Type.String({ maxLength: 255, error: "ext_id must be a string of at most 255 characters" }))),
});
export const InstanceRegistered = Type.Object({
  id: Type.String({ description: "The instance id, used as {ic_id} in the other SDK calls" }),
  just_created: Type.Boolean({ description: "true only for the call that created the device" }),
});

export const InstanceInfoBody = Type.Object({
  platform_type: PlatformType,
  transport_type: Type.Optional(orNull(TransportType)),
  transport_token: Type.Optional(TransportToken),
  lang: Type.Optional(orNull(Language)),
  country: Type.Optional(orNull(Country)),
  tz_sec: Type.Optional(orNull(TzSec)),
  model: Type.Optional(orNull(Model)),
  ext_id: Type.Optional(orNull(Type.String({ maxLength: 255, error: "ext_id must be a string of at most 255 characters" }))),
  tags: Type.Optional(orNull(Tags)),
});
export const InstanceInfoAccepted = Type.Object({
  status: Type.Literal("ok"),
  refresh_interval_sec: Type.Integer({ description: "Send device info again after this many seconds" }),
});

export const NotificationEventBody = Type.Object({
  msg_id: Type.String({ minLength: 1, maxLength: 255, error: "msg_id is required: the msg_id of the received push" }),
  event: Type.Union([Type.Literal("delivered"), Type.Literal("clicked")], { error: "event must be delivered or clicked" }),
});

export const SdkEventBody = Type.Object({
  event: EventCode,
  data: Type.Optional(orNull(Type.Record(Type.String(), Type.Unknown(), { error: "data must be an object" }))),
});

export const StatusOk = Type.Object({ status: Type.Literal("ok") });

// ---- server-side registration and the device query (core) ---------------------------------------

const deviceFields = {
  platform: Type.Optional(orNull(Type.Union([Type.Literal("android"), Type.Literal("ios"), Type.Literal("web")], { error: "platform must be one of android, ios, web" }))),
  transport_type: Type.Optional(orNull(TransportType)),
  transport_token: Type.Optional(TransportToken),
  language: Type.Optional(orNull(Language)),
  country: Type.Optional(orNull(Country)),
  tz_sec: Type.Optional(orNull(TzSec)),
  model: Type.Optional(orNull(Model)),
  tags: Type.Optional(orNull(Tags)),
};
export const ServerDeviceBody = Type.Object({
  external_id: Type.String({ minLength: 1, maxLength: 255, error: "external_id is required: 1 to 255 characters" }),
  ...deviceFields,
});
export const ServerDeviceUpdateBody = Type.Object(deviceFields);

export const DeviceObject = Type.Object({
  id: Type.Integer(),
  app_id: Type.Integer(),
  external_id: Nullable(Type.String()),
  install_token: Type.String({ description: "SDK ic_token, or srv_<external_id> for server-side and postback registrations" }),
  platform: Nullable(Type.String()),
  country: Nullable(Type.String()),
  language: Nullable(Type.String()),
  model: Nullable(Type.String()),
  tz_sec: Nullable(Type.Integer()),
  tags: Type.Record(Type.String(), Type.String()),
  events: Type.Array(Type.String(), { description: "Recorded event codes, oldest first; deposits numbered dep, dep2, ..." }),
  has_transport_token: Type.Boolean(),
  transport_type: Nullable(Type.String()),
  created_at: Timestamp,
  last_active_at: Timestamp,
});

export const DeviceQueryBody = Type.Object({
  app_id: Type.Integer({ minimum: 1, error: "app_id is required and must be a positive integer" }),
  country: Type.Optional(Country),
  language: Type.Optional(Language),
  platform: Type.Optional(Type.Union([Type.Literal("android"), Type.Literal("ios"), Type.Literal("web")], { error: "platform must be one of android, ios, web" })),
  external_id: Type.Optional(Type.String({ maxLength: 255, error: "external_id must be at most 255 characters" })),
  events: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 20, error: "events must be an array of at most 20 event codes" })),
  tags: Type.Optional(Tags),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, error: "limit must be an integer 1 to 1000" })),
  cursor: Type.Optional(orNull(Type.String({ maxLength: 200, error: "cursor must be the next_cursor of a previous page" }))),
});
export const DeviceList = Type.Object({ items: Type.Array(DeviceObject), next_cursor: Nullable(Type.String()) });

// ---- the activity log ---------------------------------------------------------------------------

export const ActivityEntry = Type.Object({
  id: Type.Integer(),
  kind: Type.String({ description: "postback" }),
  at: Timestamp,
  ip: Nullable(Type.String()),
  method: Nullable(Type.String()),
  external_id: Nullable(Type.String()),
  event: Nullable(Type.String({ description: "As sent (dep); the devices entries carry it as recorded (dep3)" })),
  params: Type.Record(Type.String(), Type.String()),
  outcome: Type.String({ description: "recorded | refused | skipped" }),
  message: Nullable(Type.String()),
  devices: Type.Array(Type.Object({ device_id: Type.Integer(), event: Nullable(Type.String()), created: Type.Boolean() })),
});
export const ActivityList = Type.Object({ items: Type.Array(ActivityEntry), next_cursor: Nullable(Type.String()) });

// ---- rules shared by the edge and core ----------------------------------------------------------

export interface DeviceInfoInput {
  platform?: string | null;
  transport_type?: string | null;
  transport_token?: unknown;
  language?: string | null;
  country?: string | null;
}

/**
 * Normalises and checks what the schemas cannot: the platform/transport pairing, the shape of a web
 * push subscription, country and language codes. Returns the first problem as a message, or the
 * normalised values (undefined = not given, null = cleared).
 */
export function checkDeviceInfo(input: DeviceInfoInput, platformField = "platform"):
  | { ok: true; transportType: string | null | undefined; transportToken: string | null | undefined; language: string | null | undefined; country: string | null | undefined }
  | { ok: false; error: string } {
  const platform = input.platform ?? null;
  let transportType = input.transport_type === undefined ? undefined : input.transport_type;
  if (platform && transportType && TRANSPORT_OF[platform as DevicePlatform] !== transportType) {
    return { ok: false, error: `transport_type must be ${TRANSPORT_OF[platform as DevicePlatform]} for ${platformField} ${platform}` };
  }
  let transportToken: string | null | undefined = undefined;
  const raw = input.transport_token;
  if (raw === null || raw === "") transportToken = null;
  else if (raw !== undefined) {
    if (!platform && !transportType) return { ok: false, error: `a transport_token needs ${platformField} or transport_type` };
    transportType ??= TRANSPORT_OF[platform as DevicePlatform];
    if (transportType === "webpush") {
      const sub = webPushSubscription(raw);
      if (typeof sub !== "string") return { ok: false, error: sub.error };
      transportToken = sub;
    } else {
      if (typeof raw !== "string" || /\s/.test(raw)) return { ok: false, error: `transport_token must be the ${transportType === "fcm" ? "FCM registration" : "APNs device"} token text` };
      transportToken = raw;
    }
  }
  let country: string | null | undefined = undefined;
  if (input.country === null || input.country === "") country = null;
  else if (input.country !== undefined) {
    if (!/^[A-Za-z]{2}$/.test(input.country)) return { ok: false, error: "country must be a 2-letter ISO 3166-1 code" };
    country = input.country.toUpperCase();
  }
  let language: string | null | undefined = undefined;
  if (input.language === null || input.language === "") language = null;
  else if (input.language !== undefined) {
    language = normalizeLanguage(input.language);
    if (!language) return { ok: false, error: `${platformField === "platform_type" ? "lang" : "language"} must be a language code such as en or pt-BR` };
  }
  return { ok: true, transportType: transportToken === null && transportType === undefined ? undefined : transportType, transportToken, language, country };
}

/** `pt_br`, `PT-br` → `pt-BR`; null when it is not a language tag. */
export function normalizeLanguage(raw: string): string | null {
  const m = /^([A-Za-z]{2,3})(?:[-_]([A-Za-z0-9]{2,8}))?(?:[-_][A-Za-z0-9]{1,8}){0,3}$/.exec(raw.trim());
  if (!m) return null;
  const primary = m[1]!.toLowerCase();
  const region = m[2];
  if (!region) return primary;
  // a region is 2 letters (upper case) or 3 digits; a script (4 letters) is title case
  const sub = /^[A-Za-z]{2}$/.test(region) ? region.toUpperCase() : region.length === 4 ? region[0]!.toUpperCase() + region.slice(1).toLowerCase() : region;
  return `${primary}-${sub}`;
}

/** A web push subscription ({endpoint, keys: {p256dh, auth}}, as object or JSON text) → canonical JSON text. */
function webPushSubscription(raw: unknown): string | { error: string } {
  const bad = { error: "transport_token must be a web push subscription: {endpoint, keys: {p256dh, auth}}" };
  let sub: unknown = raw;
  if (typeof raw === "string") {
    try {
      sub = JSON.parse(raw);
    } catch {
      return bad;
    }
  }
  if (!sub || typeof sub !== "object") return bad;
  const s = sub as { endpoint?: unknown; keys?: { p256dh?: unknown; auth?: unknown } };
  if (typeof s.endpoint !== "string" || typeof s.keys?.p256dh !== "string" || typeof s.keys?.auth !== "string") return bad;
  let url: URL;
  try {
    url = new URL(s.endpoint);
  } catch {
    return { error: "transport_token endpoint must be an http(s) URL" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return { error: "transport_token endpoint must be an http(s) URL" };
  if (s.endpoint.length > 2048 || s.keys.p256dh.length > 256 || s.keys.auth.length > 256) return { error: "transport_token is too long" };
  return JSON.stringify({ endpoint: s.endpoint, keys: { p256dh: s.keys.p256dh, auth: s.keys.auth } });
}
