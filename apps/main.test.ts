import { afterAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * `bun run start` as a newcomer runs it: embedded mode (whatever this CI run's services), no
 * configuration but a data folder; the data survives a restart.
 */
const dataDir = mkdtempSync(join(tmpdir(), "ps-main-"));
const procs: Bun.Subprocess[] = [];
afterAll(() => procs.forEach((p) => p.kill("SIGKILL")));

async function start(): Promise<{ base: string; proc: Bun.Subprocess; lines: string[] }> {
  const proc = Bun.spawn(["bun", join(import.meta.dir, "main.ts")], {
    env: { ...process.env, PORT: "0", DATA_DIR: dataDir, DATABASE_URL: "", NATS_URL: "", ADMIN_EMAIL: "boss@example.com", ADMIN_PASSWORD: "boss-password" },
    stdout: "pipe",
    stderr: "inherit",
  });
  procs.push(proc);
  const lines: string[] = [];
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  let port = 0;
  const deadline = Date.now() + 60_000;
  while (!port && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value);
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      lines.push(line);
      const rec = JSON.parse(line);
      if (rec.msg === "listening") port = rec.port;
    }
  }
  // keep draining so the child never blocks on a full pipe
  (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      lines.push(...decoder.decode(value).split("\n").filter(Boolean));
    }
  })();
  expect(port).toBeGreaterThan(0);
  return { base: `http://127.0.0.1:${port}`, proc, lines };
}

async function waitHealthy(base: string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const r = await fetch(`${base}/healthz`).catch(() => null);
    if (r?.status === 200) return r.json();
    if (Date.now() > deadline) throw new Error("never healthy");
    if (r) expect([503]).toContain(r.status);
    await Bun.sleep(100);
  }
}

test("bun run start: healthz, docs, the API, structured logs with request ids, data kept across restarts", async () => {
  const a = await start();
  expect(await waitHealthy(a.base)).toEqual({ status: "ok" });
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
