import { test, expect } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, redactConfig, ConfigError } from "./config";

const dir = () => mkdtempSync(join(tmpdir(), "cfg-"));

test("embedded defaults generate secrets once and keep them", () => {
  const d = dir();
  const a = loadConfig({ DATA_DIR: d });
  const b = loadConfig({ DATA_DIR: d });
  expect(a.port).toBe(3000);
  expect(a.databaseUrl).toBeNull();
  expect(a.jwtSecret).toBe(b.jwtSecret);
  expect(a.masterKey.equals(b.masterKey)).toBe(true);
  expect(a.masterKey.length).toBe(32);
});

test("bad values are refused with the variable's name", () => {
  expect(() => loadConfig({ DATA_DIR: dir(), PORT: "x" })).toThrow(/PORT/);
  expect(() => loadConfig({ DATA_DIR: dir(), DATABASE_URL: "mysql://x" })).toThrow(ConfigError);
  expect(() => loadConfig({ DATA_DIR: dir(), ADMIN_EMAIL: "a@b.c" })).toThrow(/ADMIN_PASSWORD/);
  expect(() => loadConfig({ DATA_DIR: dir(), MASTER_KEY: "c2hvcnQ=", JWT_SECRET: "x".repeat(40) })).toThrow(/MASTER_KEY/);
});

test("redaction hides every secret", () => {
  const c = loadConfig({ DATA_DIR: dir(), DATABASE_URL: "postgres://u:hunter2@db/x", ADMIN_EMAIL: "a@b.c", ADMIN_PASSWORD: "hunter2hunter2" });
  const text = JSON.stringify(redactConfig(c));
  expect(text).not.toContain("hunter2");
  expect(text).not.toContain(c.jwtSecret);
  expect(text).not.toContain(c.masterKey.toString("base64"));
  expect(text).toContain("postgres://u:***@db/x");
});
