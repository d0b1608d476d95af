import { Type, type TSchema } from "@sinclair/typebox";
import { Nullable, Timestamp } from "./common";
import { EventCodePattern, isDeposit, LIFECYCLE_EVENTS } from "./devices";

/**
 * Events group: the event codes of an app (recorded by postbacks and SDK events, or declared by its
 * owner) with lifetime counters. Codes follow the ingest rule exactly (`EventCodePattern`, case kept):
 * a declared code is the very text a postback or SDK event records.
 */

/** Codes the service gives a meaning: conversions, deposits as numbered (`dep`, `dep2`, ...), SDK lifecycle. */
export const BUILTIN_EVENTS = ["install", "reg", "dep", "purchase", "subscribe", ...LIFECYCLE_EVENTS] as const;
const builtinSet = new Set<string>(BUILTIN_EVENTS);
export const isBuiltinEvent = (code: string) => builtinSet.has(code) || isDeposit(code);

const CODE_RULE = "1 to 64 characters of letters, digits, _ . : -";
/** Nullable whose failure names the field (a failing union reports against itself). */
const orNull = <T extends TSchema>(error: string, s: T) => Type.Union([s, Type.Null()], { error });
const Name = orNull("name must be 1 to 255 characters, or null", Type.String({ minLength: 1, maxLength: 255 }));
const Description = orNull("description must be at most 2000 characters, or null", Type.String({ maxLength: 2000 }));

export const DeclareEventBody = Type.Object({
  code: Type.String({ pattern: EventCodePattern.source, error: `code is required: ${CODE_RULE} (case-sensitive, as postbacks and SDKs send it)` }),
  name: Type.Optional(Name),
  description: Type.Optional(Description),
});

export const UpdateEventBody = Type.Object({ name: Type.Optional(Name), description: Type.Optional(Description) });

export const EventsQuery = Type.Object({
  sort: Type.Optional(Type.String({ description: "`count` (default: most recorded first, then by code) or `code` (by code)" })),
  limit: Type.Optional(Type.String({ description: "1 to 1000, default 100" })),
  cursor: Type.Optional(Type.String({ description: "next_cursor of the previous page (same sort)" })),
});

export const EventObject = Type.Object({
  code: Type.String({ description: "As recorded: deposits carry their number (dep, dep2, ...)" }),
  name: Nullable(Type.String({ description: "Declared display name" })),
  description: Nullable(Type.String()),
  builtin: Type.Boolean({ description: "A code the service defines: install, reg, dep/depN, purchase, subscribe, onscreen, background, closed" }),
  defined: Type.Boolean({ description: "Declared by the app's owner (POST /api/v3/apps/:app_id/events)" }),
  count: Type.Integer({ description: "Events recorded with this code over the app's life (no date range: lifetime counters)" }),
  devices: Type.Integer({ description: "Devices that recorded this code at least once (deleted devices stay counted)" }),
  first_at: Nullable(Timestamp),
  last_at: Nullable(Timestamp),
});

export const EventList = Type.Object({ items: Type.Array(EventObject), next_cursor: Nullable(Type.String()) });
