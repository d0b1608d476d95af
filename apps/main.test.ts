import { afterAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startApp, waitHealthy } from "@pushstack/testing";

/**
 * `bun run start` as a newcomer runs it: embedded mode (whatever this CI run's services), no
 * configuration but a data folder; the data survives a restart.
 */
const dataDir = mkdtempSync(join(tmpdir(), "ps-main-"));
const procs: Bun.Subprocess[] = [];
afterAll(() => procs.forEach((p) => p.kill("SIGKILL")));

const env = { DATA_DIR: dataDir, DATABASE_URL: "", NATS_URL: "", ADMIN_EMAIL: "boss@example.com", ADMIN_PASSWORD: "boss-password" };

async function start() {
  const child = await startApp("apps/main.ts", env);
  procs.push(child.proc);
  return child;
}

test("bun run start: healthz, docs, the API, structured logs with request ids, data kept across restarts", async () => {
  const a = await start();
  await waitHealthy(a.base);
  expect(await (await fetch(`${a.base}/healthz`)).json()).toEqual({ status: "ok" });
  const docs = await fetch(`${a.base}/docs`);
  expect(docs.status).toBe(200);
  expect(await docs.text()).toContain("<html");
  const spec = (await (await fetch(`${a.base}/openapi.json`)).json()) as any;
  expect(spec.paths["/api/v3/apps"]).toBeDefined();
  expect(spec.paths["/api/v3/admin/push-packs/{pack_id}/publish"]).toBeDefined();
  const reg = await fetch(`${a.base}/api/auth/register`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-request-id": "req-abc-123" },
    body: JSON.stringify({ email: "kept@example.com", password: "12345678" }),
  });
  expect(reg.status).toBe(201);
  expect(reg.headers.get("x-request-id")).toBe("req-abc-123");
  await Bun.sleep(100);
  const access = a.lines.map((l) => JSON.parse(l)).find((r) => r.request_id === "req-abc-123");
  expect(access).toMatchObject({ msg: "request", method: "POST", path: "/api/auth/register", status: 201 });
  // no secret in any log line
  const secrets = JSON.parse(await Bun.file(join(dataDir, "secrets.json")).text());
  for (const l of a.lines) {
    expect(l).not.toContain(secrets.jwtSecret);
    expect(l).not.toContain(secrets.masterKey);
    expect(l).not.toContain("boss-password");
  }
  a.proc.kill("SIGTERM");
  expect(await a.proc.exited).toBe(0);

  const b = await start();
  await waitHealthy(b.base);
  const login = await fetch(`${b.base}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "kept@example.com", password: "12345678" }),
  });
  expect(login.status).toBe(200);
  const admin = await fetch(`${b.base}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "boss@example.com", password: "boss-password" }),
  });
  expect(admin.status).toBe(200);
  b.proc.kill("SIGTERM");
  expect(await b.proc.exited).toBe(0);
}, 120_000);
