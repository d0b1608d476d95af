import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * Secrets at rest and on the bus (transport credentials, VAPID private keys) are sealed with AES-256-GCM
 * under MASTER_KEY. Format: "v1:" + base64(iv[12] | tag[16] | ciphertext). "v1" leaves room for key rotation.
 * Core seals; the dispatcher opens what core published to the `app_credentials` KV bucket.
 */
export function seal(masterKey: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", masterKey, iv);
  const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return "v1:" + Buffer.concat([iv, cipher.getAuthTag(), ct]).toString("base64");
}

export function open(masterKey: Buffer, sealed: string): string {
  if (!sealed.startsWith("v1:")) throw new Error("unknown sealed format");
  const raw = Buffer.from(sealed.slice(3), "base64");
  const decipher = createDecipheriv("aes-256-gcm", masterKey, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
}
