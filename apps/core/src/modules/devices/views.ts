import type { DeviceRow } from "./store";

/** The device object of the contract (plus `transport_type`); the transport token itself never leaves core. */
export function deviceView(d: DeviceRow) {
  return {
    id: d.id,
    app_id: d.appId,
    external_id: d.externalId,
    install_token: d.installToken,
    platform: d.platform,
    country: d.country,
    language: d.language,
    model: d.model,
    tz_sec: d.tzSec,
    tags: d.tags,
    events: d.events,
    has_transport_token: !!d.transportToken && !d.tokenInvalid,
    transport_type: d.transportType,
    created_at: d.createdAt.toISOString(),
    last_active_at: d.lastActiveAt.toISOString(),
  };
}

/** Keyset cursors are opaque: "d" + the last id, base64url. */
export function encodeCursor(id: number): string {
  return Buffer.from(`d${id}`).toString("base64url");
}

export function decodeCursor(cursor: string): number | null {
  const m = /^d([0-9]{1,15})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  return m ? Number(m[1]) : null;
}
