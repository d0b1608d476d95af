import { randomBytes, createHash } from "node:crypto";

export { seal, open } from "@pushstack/config";

/** High-entropy tokens (API keys) are looked up by their SHA-256: no salt needed, and O(1) lookup. */
export const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

export const randomToken = (bytes = 24) => randomBytes(bytes).toString("base64url");
