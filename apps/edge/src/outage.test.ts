import { afterAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { createNatsBus, type NatsBus } from "@pushstack/bus";
import { loadConfig, silentLogger } from "@pushstack/config";
import { createServer } from "@pushstack/http";
import { IngestSubjects, Subjects } from "@pushstack/schema";
import { createEdge, type Edge } from "./edge";
import { freePort, hasNatsServer, startNats } from "@pushstack/testing";

/**
 * The bus goes away under the edge: a NATS server of this test's own is killed and restarted.
 * While it is down every postback is a quick 503 (never a 200); afterwards the edge recovers by itself,
 * and what it acknowledged before the outage is still in the stream.
 */
const procs: Bun.Subprocess[] = [];
const cleanup: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => {});
  procs.forEach((p) => p.kill("SIGKILL"));
});

test.skipIf(!hasNatsServer())("NATS down: 503 at once, never 200; back up: the edge recovers by itself", async () => {
  const port = freePort();
  const store = mkdtempSync(join(tmpdir(), "ps-nats-"));
  procs.push(await startNats(port, store));
  const url = `nats://127.0.0.1:${port}`;
  const prefix = `to${randomBytes(4).toString("hex")}`;
  const config = loadConfig({ DATA_DIR: mkdtempSync(join(tmpdir(), "ps-edge-")), NATS_URL: url, BUS_PREFIX: prefix, POSTBACK_RATE_LIMIT: "100000" });
  // core's part, played by the test: one app in the directory
  const admin: NatsBus = await createNatsBus({ url, prefix });
  cleanup.push(() => admin.close());
  const kv = await admin.kv(Subjects.appDirectoryBucket);
  await kv.put("1", JSON.stringify({ id: 1, user_id: 1, archived: false, postback_token: "t", platform: "web", plan: "free", subscription_status: "active", updated_at: new Date().toISOString() }));

  const bus = await createNatsBus({ url, prefix });
  cleanup.push(() => bus.close());
  const edge: Edge = createEdge({ config, log: silentLogger, bus: () => bus });
  await edge.start();
  cleanup.push(() => edge.stop());
  const server = createServer({ log: silentLogger, ready: async () => edge.ready() }).use(edge.routes).listen({ port: 0, hostname: "127.0.0.1" });
  cleanup.push(() => server.stop(true));
  const base = `http://127.0.0.1:${server.server!.port}`;
  const postback = async (n: number) => {
    const t = performance.now();
    const r = await fetch(`${base}/postback?app_id=1&external_id=u${n}&event=dep`);
    return { status: r.status, ms: performance.now() - t, body: (await r.json()) as { error?: unknown }, retryAfter: r.headers.get("retry-after") };
  };

  const before = await Promise.all(Array.from({ length: 20 }, (_, i) => postback(i)));
  expect(before.map((r) => r.status)).toEqual(Array(20).fill(200));
  expect((await fetch(`${base}/healthz`)).status).toBe(200);

  procs[0]!.kill("SIGKILL");
  await procs[0]!.exited;
  // the client notices the dropped connection (at once on loopback; bounded for a loaded machine)
  for (let i = 0; i < 100 && bus.isConnected(); i++) await Bun.sleep(50);
  expect(bus.isConnected()).toBe(false);
  const during = await Promise.all(Array.from({ length: 20 }, (_, i) => postback(100 + i)));
  for (const r of during) {
    expect(r.status).toBe(503);
    expect(r.ms).toBeLessThan(1000);
    expect(typeof r.body.error).toBe("string");
    expect(r.retryAfter).toBe("1");
  }
  expect((await fetch(`${base}/healthz`)).status).toBe(503);

  procs[0] = await startNats(port, store);
  const end = Date.now() + 20_000;
  let after = await postback(200);
  while (after.status !== 200 && Date.now() < end) {
    expect(after.status).toBe(503);
    await Bun.sleep(200);
    after = await postback(200);
  }
  expect(after.status).toBe(200);
  const more = await Promise.all(Array.from({ length: 20 }, (_, i) => postback(300 + i)));
  expect(more.every((r) => r.status === 200)).toBe(true);
  expect((await fetch(`${base}/healthz`)).status).toBe(200);

  // everything answered 200 is in the stream (file storage survived the kill), nothing answered 503 is;
  // the checking connection reconnects on its own schedule, not the edge's
  for (let i = 0; i < 400 && !admin.isConnected(); i++) await Bun.sleep(50);
  expect(admin.isConnected()).toBe(true);
  const stored = new Set<string>();
  const sub = await admin.consume({ stream: IngestSubjects.stream, durable: "check" }, (m) => {
    for (const it of m.json<{ items: Array<{ external_id: string }> }>().items) stored.add(it.external_id);
    m.ack();
  });
  const want = [...before.map((_, i) => `u${i}`), "u200", ...more.map((_, i) => `u${300 + i}`)];
  for (let i = 0; i < 400 && want.some((w) => !stored.has(w)); i++) await Bun.sleep(25);
  await sub.stop();
  expect(want.filter((w) => !stored.has(w))).toEqual([]);
  expect([...stored].filter((s) => /^u1[0-9]{2}$/.test(s))).toEqual([]);
}, 60_000);
