import { createDecipheriv, hkdfSync, type ECDH } from "node:crypto";

/**
 * Decryption of a Web Push message body as the user agent does it: RFC 8291 key derivation over
 * RFC 8188 `aes128gcm` content coding, written from the RFCs with node:crypto. It is deliberately
 * not `http_ece` (the module web-push encrypts with, and not a dependency of this workspace): a
 * peer that decrypted with the sender's own code would not notice the sender getting the spec wrong.
 */

export class EceError extends Error {
  override name = "EceError";
}

const hkdf = (salt: Buffer, ikm: Buffer, info: Buffer, len: number) => Buffer.from(hkdfSync("sha256", ikm, salt, info, len));

export function decryptAes128gcm(body: Buffer, receiver: ECDH, authSecret: string | Buffer): Buffer {
  if (body.length < 21) throw new EceError("body shorter than the aes128gcm header");
  const salt = body.subarray(0, 16);
  const rs = body.readUInt32BE(16);
  const idlen = body[20];
  if (rs < 18) throw new EceError("record size too small");
  if (idlen !== 65) throw new EceError("keyid is not an uncompressed P-256 key");
  if (body.length < 21 + idlen) throw new EceError("truncated header");
  const senderPublic = body.subarray(21, 21 + idlen);
  const records = body.subarray(21 + idlen);
  const receiverPublic = receiver.getPublicKey();
  let shared: Buffer;
  try {
    shared = receiver.computeSecret(senderPublic);
  } catch {
    throw new EceError("sender key is not on the curve");
  }
  const auth = typeof authSecret === "string" ? Buffer.from(authSecret, "base64url") : authSecret;
  // RFC 8291 section 3.4: IKM = HKDF(auth_secret, ecdh_secret, "WebPush: info" || 0 || ua_public || as_public, 32)
  const ikm = hkdf(auth, shared, Buffer.concat([Buffer.from("WebPush: info\0"), receiverPublic, senderPublic]), 32);
  // RFC 8188 section 2.2/2.3: CEK and NONCE from the salt
  const cek = hkdf(salt, ikm, Buffer.from("Content-Encoding: aes128gcm\0"), 16);
  const baseNonce = hkdf(salt, ikm, Buffer.from("Content-Encoding: nonce\0"), 12);
  const out: Buffer[] = [];
  const count = Math.ceil(records.length / rs);
  if (count === 0) throw new EceError("no records");
  for (let i = 0; i < count; i++) {
    const rec = records.subarray(i * rs, Math.min(records.length, (i + 1) * rs));
    if (rec.length < 17) throw new EceError("record too short");
    const nonce = Buffer.from(baseNonce);
    nonce.writeUInt32BE((nonce.readUInt32BE(8) ^ i) >>> 0, 8); // SEQ XOR (records < 2^32)
    const d = createDecipheriv("aes-128-gcm", cek, nonce);
    d.setAuthTag(rec.subarray(rec.length - 16));
    let plain: Buffer;
    try {
      plain = Buffer.concat([d.update(rec.subarray(0, rec.length - 16)), d.final()]);
    } catch {
      throw new EceError("authentication tag mismatch");
    }
    // Padding: the content, a delimiter (2 in the last record, 1 otherwise), then zeros.
    let end = plain.length - 1;
    while (end >= 0 && plain[end] === 0) end--;
    const last = i === count - 1;
    if (end < 0 || plain[end] !== (last ? 2 : 1)) throw new EceError("bad padding delimiter");
    out.push(plain.subarray(0, end));
  }
  return Buffer.concat(out);
}
