import { Notification } from "@parse/node-apn";
import type { TokenMessage } from "firebase-admin/messaging";
import type { PushContent } from "./types";
import { DEFAULT_TTL_SECONDS } from "./limits";

/**
 * Pure payload building, separate from the network calls so each shape is unit-tested.
 *
 * The contract: a web push payload is a JSON object with msg_id, title, body and, where the push
 * sets them, icon_url, image_url, click_url. Android (FCM) and iOS (APNs) messages carry the
 * same keys in their data and alert fields.
 */

const OPTIONAL_KEYS = ["icon_url", "image_url", "click_url"] as const;

/** Content the builders accept: a msg_id, a title, an optional body, optional URL strings. */
export function isValidContent(c: unknown): c is PushContent {
  if (!c || typeof c !== "object") return false;
  const v = c as Record<string, unknown>;
  const optional = (x: unknown) => x === undefined || x === null || typeof x === "string";
  return typeof v.msg_id === "string" && v.msg_id !== "" && typeof v.title === "string" && optional(v.body) && OPTIONAL_KEYS.every((k) => optional(v[k]));
}

/** The contract's keys with string values; optional keys only when the push sets them. */
export function contentKeys(c: PushContent): Record<string, string> {
  const out: Record<string, string> = { msg_id: String(c.msg_id), title: String(c.title ?? ""), body: String(c.body ?? "") };
  for (const k of OPTIONAL_KEYS) {
    const v = c[k];
    if (typeof v === "string" && v !== "") out[k] = v;
  }
  return out;
}

/**
 * A data-only FCM message: the Android SDK builds the notification itself, so it can report
 * `delivered` when it shows it and attach `msg_id` to the click. High priority so it is shown
 * while the device dozes; TTL so a stale promotion is dropped rather than delivered late.
 */
export function buildFcmMessage(token: string, c: PushContent, ttlSeconds = DEFAULT_TTL_SECONDS): TokenMessage {
  return { token, data: contentKeys(c), android: { priority: "high", ttl: ttlSeconds * 1000 } };
}

/**
 * An APNs alert: `aps.alert` carries title and body, the contract's keys ride at the top level
 * of the payload beside `aps`; mutable-content lets a notification service extension download
 * `image_url`. Topic is the bundle id and push type `alert`, as Apple requires for alerts.
 */
export function buildApnsNotification(c: PushContent, opts: { bundleId: string; ttlSeconds?: number; nowSec?: number }): Notification {
  const note = new Notification();
  const keys = contentKeys(c);
  note.topic = opts.bundleId;
  note.pushType = "alert";
  note.priority = 10;
  note.expiry = (opts.nowSec ?? Math.floor(Date.now() / 1000)) + (opts.ttlSeconds ?? DEFAULT_TTL_SECONDS);
  note.alert = { title: keys.title, body: keys.body };
  note.sound = "default";
  if (keys.image_url) note.mutableContent = true;
  note.payload = keys;
  return note;
}

/** The Web Push plaintext (encrypted per subscription by web-push). */
export function buildWebPushPayload(c: PushContent): string {
  return JSON.stringify(contentKeys(c));
}
