import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * SDK instance ids (`{ic_id}`): `<device id>-<tag>`, the tag a truncated HMAC of (app id, device id)
 * under a key derived from MASTER_KEY. The edge checks an id without a database: a made-up id, or one
 * of another app, is a 404 at the edge and never reaches core. Every edge derives the same key (the
 * README asks for one MASTER_KEY across processes).
 */
export class InstanceIds {
  private readonly key: Buffer;

  constructor(masterKey: Buffer) {
    this.key = createHmac("sha256", masterKey).update("pushstack/instance-id/v1").digest();
  }

  private tag(appId: number, deviceId: number): string {
    return createHmac("sha256", this.key).update(`${appId}:${deviceId}`).digest("hex").slice(0, 16);
  }

  sign(appId: number, deviceId: number): string {
    return `${deviceId}-${this.tag(appId, deviceId)}`;
  }

  /** The device id, or null when the id was not issued for this app. */
  verify(appId: number, icId: string): number | null {
    const m = /^([1-9][0-9]{0,15})-([0-9a-f]{16})$/.exec(icId);
    if (!m) return null;
    const deviceId = Number(m[1]);
    if (!Number.isSafeInteger(deviceId)) return null;
    const want = Buffer.from(this.tag(appId, deviceId));
    return timingSafeEqual(want, Buffer.from(m[2]!)) ? deviceId : null;
  }
}
