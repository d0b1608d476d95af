import { test, expect } from "bun:test";
import { randomBytes } from "node:crypto";
import { seal, open } from "./sealing";

test("seal/open round-trips and never shows the plaintext", () => {
  const key = randomBytes(32);
  const s = seal(key, "-----BEGIN PRIVATE KEY----- secret");
  expect(s.startsWith("v1:")).toBe(true);
  expect(s).not.toContain("secret");
  expect(open(key, s)).toBe("-----BEGIN PRIVATE KEY----- secret");
  expect(seal(key, "x")).not.toBe(seal(key, "x")); // fresh IV each time
});

test("a wrong key or a tampered text is refused", () => {
  const key = randomBytes(32);
  const s = seal(key, "hello");
  expect(() => open(randomBytes(32), s)).toThrow();
  const raw = Buffer.from(s.slice(3), "base64");
  raw[raw.length - 1] ^= 1;
  expect(() => open(key, "v1:" + raw.toString("base64"))).toThrow();
});
