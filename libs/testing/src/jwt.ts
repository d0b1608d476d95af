import { createPublicKey, verify, type KeyObject } from "node:crypto";

/**
 * JWT checks the peers make, written against node:crypto rather than a JWT library so that a
 * peer never shares code with the client library whose output it judges.
 */
export interface DecodedJwt {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  signingInput: string;
  signature: Buffer;
}

export function decodeJwt(token: string): DecodedJwt | null {
  const parts = token.split(".");
  if (parts.length !== 3) return null;
  try {
    const header = JSON.parse(Buffer.from(parts[0], "base64url").toString("utf8"));
    const payload = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8"));
    if (typeof header !== "object" || !header || typeof payload !== "object" || !payload) return null;
    return { header, payload, signingInput: `${parts[0]}.${parts[1]}`, signature: Buffer.from(parts[2], "base64url") };
  } catch {
    return null;
  }
}

/** ES256 signatures are raw r||s (64 bytes), RS256 are PKCS#1 v1.5 over SHA-256. */
export function verifyJwtSignature(jwt: DecodedJwt, alg: "ES256" | "RS256", key: KeyObject | string): boolean {
  if (jwt.header.alg !== alg) return false;
  const k = typeof key === "string" ? createPublicKey(key) : key;
  try {
    return verify("sha256", Buffer.from(jwt.signingInput), alg === "ES256" ? { key: k, dsaEncoding: "ieee-p1363" } : k, jwt.signature);
  } catch {
    return false;
  }
}

/** A P-256 public key from its uncompressed point (65 bytes, as in VAPID `k=` and `p256dh`). */
export function p256PublicKeyFromRaw(raw: Buffer): KeyObject {
  if (raw.length !== 65 || raw[0] !== 4) throw new Error("not an uncompressed P-256 point");
  return createPublicKey({
    key: { kty: "EC", crv: "P-256", x: raw.subarray(1, 33).toString("base64url"), y: raw.subarray(33).toString("base64url") },
    format: "jwk",
  });
}
