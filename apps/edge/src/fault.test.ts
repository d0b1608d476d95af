import { afterAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { call, startApp, waitHealthy, type Child } from "@pushstack/testing";

/**
 * Core is killed (SIGKILL) while postbacks stream in; after a restart, every postback that got a 200
 * is recorded exactly once. Each postback carries a unique `click_id` (kept in the activity log), and
 * they are deposits of a few users, so a doubled or lost one would also show as a gap or a repeat in
 * a user's dep, dep2, ... A request cut off by the kill got no answer: it may be recorded, at most once.
 */
const children: Child[] = [];
afterAll(() => children.forEach((c) => c.proc.kill("SIGKILL")));

const USERS = 30;
const PER_USER = 12;

/** Sends USERS x PER_USER deposits, 16 at a time; calls `midway` once about a third are answered. */
async function stream(base: () => string, appId: number, midway: () => Promise<void>) {
  const ok = new Set<string>();
  const cut = new Set<string>();
  const jobs = Array.from({ length: USERS * PER_USER }, (_, i) => i);
  let answered = 0;
  let tripped: Promise<void> | null = null;
  const worker = async () => {
    for (let i = jobs.shift(); i !== undefined; i = jobs.shift()) {
      const r = await fetch(`${base()}/postback?app_id=${appId}&external_id=user-${i % USERS}&event=dep&click_id=c${i}`).catch(() => null);
      (r?.status === 200 ? ok : cut).add(`c${i}`);
      if (++answered === Math.floor((USERS * PER_USER) / 3)) tripped = midway();
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  await tripped;
  return { ok, cut };
}

/** The activity log and the devices, once core has caught up with the 200s. */
async function recorded(base: string, token: string, appId: number, ok: Set<string>) {
  const end = Date.now() + 90_000;
  for (;;) {
    const log: any[] = [];
    let cursor: string | null = null;
    do {
      const r: { status: number; body: any } = await call(base, "GET", `/api/v3/apps/${appId}/activity?limit=500${cursor ? `&cursor=${cursor}` : ""}`, undefined, token);
      expect(r.status).toBe(200);
      log.push(...r.body.items);
      cursor = r.body.next_cursor;
    } while (cursor);
    const seen = new Set(log.map((e) => e.params.click_id));
    if ([...ok].every((c) => seen.has(c)) || Date.now() > end) {
      const q = await call(base, "POST", "/api/v3/query/app-instances", { app_id: appId, limit: 1000 }, token);
      expect(q.status).toBe(200);
      return { log, devices: new Map<string, string[]>(q.body.items.map((d: any) => [d.external_id, d.events])) };
    }
    await Bun.sleep(250);
  }
}

function expectExactlyOnce(sent: { ok: Set<string>; cut: Set<string> }, got: { log: any[]; devices: Map<string, string[]> }) {
  expect(sent.ok.size).toBeGreaterThan(0);
  const times = new Map<string, number>();
  for (const e of got.log) times.set(e.params.click_id, (times.get(e.params.click_id) ?? 0) + 1);
  const wrong = [...sent.ok].filter((c) => times.get(c) !== 1);
  expect(wrong).toEqual([]); // every 200: exactly once
  expect([...times].filter(([c, n]) => n > 1 || (!sent.ok.has(c) && !sent.cut.has(c)))).toEqual([]);
  // per user: the deposits recorded are dep .. depK, K = the user's log entries, each number once
  const perUser = new Map<string, string[]>();
  for (const e of got.log) perUser.set(e.external_id, [...(perUser.get(e.external_id) ?? []), e.devices[0].event]);
  for (const [user, codes] of perUser) {
    const want = ["dep", ...Array.from({ length: codes.length - 1 }, (_, i) => `dep${i + 2}`)];
    expect({ user, codes: [...codes].sort() }).toEqual({ user, codes: [...want].sort() });
    expect({ user, events: got.devices.get(user) }).toEqual({ user, events: want });
  }
}

async function accountWithApp(base: string) {
  const reg = await call(base, "POST", "/api/auth/register", { email: `f${randomBytes(4).toString("hex")}@example.com`, password: "fault-password" });
  expect(reg.status).toBe(201);
  const app = await call(base, "POST", "/api/v3/apps", { name: "fault", platform: "android" }, reg.body.token);
  expect(app.status).toBe(201);
  return { token: reg.body.token as string, appId: app.body.id as number };
}

const services = !!process.env.NATS_URL && !!process.env.DATABASE_URL;

test.skipIf(!services)("NATS + PostgreSQL: core SIGKILLed mid-stream, restarted: every 200 recorded exactly once", async () => {
  const { default: postgres } = await import("postgres");
  const dbName = `ps_fault_${randomBytes(4).toString("hex")}`;
  const admin = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${dbName}`);
  try {
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/${dbName}`;
    const env = {
      DATABASE_URL: url.toString(),
      NATS_URL: process.env.NATS_URL!,
      BUS_PREFIX: `tf${randomBytes(4).toString("hex")}`,
      DATA_DIR: mkdtempSync(join(tmpdir(), "ps-fault-")),
      JWT_SECRET: randomBytes(32).toString("hex"),
      MASTER_KEY: randomBytes(32).toString("base64"),
      POSTBACK_RATE_LIMIT: "100000",
    };
    let core = await startApp("apps/core/src/main.ts", env);
    children.push(core);
    await waitHealthy(core.base);
    const edge = await startApp("apps/edge/src/main.ts", env);
    children.push(edge);
    const { token, appId } = await accountWithApp(core.base);
    await waitHealthy(edge.base);
    // the edge learns the app from the directory (or asks core)
    for (let i = 0; i < 100 && (await fetch(`${edge.base}/postback?app_id=${appId}`)).status !== 200; i++) await Bun.sleep(50);

    const sent = await stream(
      () => edge.base,
      appId,
      async () => {
        core.proc.kill("SIGKILL");
        await core.proc.exited;
      },
    );
    // the edge kept answering 200 while core was down: the stream holds the postbacks
    expect(sent.ok.size).toBe(USERS * PER_USER);
    core = await startApp("apps/core/src/main.ts", env);
    children.push(core);
    await waitHealthy(core.base);
    expectExactlyOnce(sent, await recorded(core.base, token, appId, sent.ok));
  } finally {
    for (const c of children) c.proc.kill("SIGKILL");
    await Promise.all(children.map((c) => c.proc.exited));
    await admin.unsafe(`drop database if exists ${dbName} with (force)`).catch(() => {});
    await admin.end({ timeout: 5 });
  }
}, 180_000);

test("embedded: the whole process SIGKILLed mid-stream, restarted on its data: every 200 recorded exactly once", async () => {
  const env = { DATABASE_URL: "", NATS_URL: "", DATA_DIR: mkdtempSync(join(tmpdir(), "ps-fault-emb-")), POSTBACK_RATE_LIMIT: "100000" };
  let main = await startApp("apps/main.ts", env);
  children.push(main);
  await waitHealthy(main.base);
  const { token, appId } = await accountWithApp(main.base);
  let base = main.base;
  const sent = await stream(
    () => base,
    appId,
    async () => {
      main.proc.kill("SIGKILL");
      await main.proc.exited;
      // requests meanwhile fail to connect (not 200s); the restarted process takes the rest
      main = await startApp("apps/main.ts", env);
      children.push(main);
      await waitHealthy(main.base);
      base = main.base;
    },
  );
  expect(sent.cut.size).toBeGreaterThan(0); // the kill really happened mid-stream
  expectExactlyOnce(sent, await recorded(main.base, token, appId, sent.ok));
}, 180_000);
