/**
 * Sending a scheduled pack push to a large app, end to end (needs PostgreSQL and NATS):
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres NATS_URL=nats://127.0.0.1:4222 bun bench/sending.ts
 *   (BENCH_N=1000000 devices; BENCH_SMALL=100000 for the memory comparison)
 *
 * Three processes, as deployed: core (this one: the tick, the fan-out pump, the results consumer), a
 * dispatcher (child) and the FCM peer (child). For two app sizes the devices are seeded in bulk
 * (INSERT ... SELECT generate_series), then the `schedule-tick` job runs for the push's minute and the
 * clock stops when the peer has accepted the last recipient. Printed: time tick → all jobs published
 * (core's part), tick → last accepted,
 * recipients/s, peak RSS of core and dispatcher, and the baseline measured in the same run: a bare
 * keyset read of the same audience in pages of 500 (the floor of the fan-out's database work).
 * The dispatcher's FCM per-project quota (600k/min, FCM's own) is lifted here, else it alone bounds
 * one app at 600k recipients a minute. Correctness asserted: every recipient accepted exactly once
 * (peer count = audience, no send left fanning). No time is asserted.
 */
import { sql } from "drizzle-orm";
import { createLogger, silentLogger, loadConfig } from "@pushstack/config";
import { createBus } from "@pushstack/bus";
import { makeFcmToken, makeServiceAccount, startFcmPeer } from "@pushstack/testing";
import { startDispatcher } from "@pushstack/dispatcher";
import { appPushPacks, packLanguages, packScheduledPushes, pushPacks, sends } from "@pushstack/schema";
import { startTestCore } from "../apps/core/src/testing/harness";
import { runJob } from "../apps/core/src/modules/jobs";

const N = Number(process.env.BENCH_N ?? 1_000_000);
const SMALL = Number(process.env.BENCH_SMALL ?? 100_000);

// ------------------------------------------------------------ children
if (process.argv.includes("--peer")) {
  const fcm = await startFcmPeer({ record: false });
  process.on("message", (m: any) => {
    if (m.cmd === "sa") fcm.addServiceAccount(m.sa), process.send!({ id: m.id });
    else if (m.cmd === "stats") process.send!({ id: m.id, data: { accepted: fcm.stats.accepted, byStatus: fcm.stats.byStatus } });
  });
  process.send!({ ready: { connectTo: fcm.connectTo, ca: fcm.ca, oauthTokenUrl: fcm.oauthTokenUrl } });
  await new Promise(() => {});
}
if (process.argv.includes("--dispatcher")) {
  const opts = JSON.parse(process.env.BENCH_DISPATCHER!);
  const config = loadConfig({ DATA_DIR: opts.dataDir, NATS_URL: opts.natsUrl, BUS_PREFIX: opts.prefix, MASTER_KEY: opts.masterKey, JWT_SECRET: "x".repeat(40) });
  const bus = await createBus({ natsUrl: config.natsUrl, prefix: config.busPrefix });
  await startDispatcher({ config, log: process.env.BENCH_DEBUG ? createLogger("debug") : silentLogger, bus, concurrency: 32, transports: { fcm: { ...opts.fcm, projectMessagesPerMinute: 1e9 } } });
  process.on("message", (m: any) => process.send!({ id: m.id, data: { rss: process.memoryUsage().rss } }));
  process.send!({ ready: true });
  await new Promise(() => {});
}

// ------------------------------------------------------------ parent: core
if (!process.env.DATABASE_URL || !process.env.NATS_URL) throw new Error("set DATABASE_URL and NATS_URL");
function child(flag: string, env: Record<string, string> = {}) {
  const pending = new Map<number, (d: any) => void>();
  let ready!: (v: any) => void;
  const readyP = new Promise<any>((r) => (ready = r));
  let id = 0;
  const proc = Bun.spawn(["bun", import.meta.path, flag], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "inherit", "inherit"],
    ipc(m: any) {
      if (m.ready) ready(m.ready);
      else pending.get(m.id)?.(m.data), pending.delete(m.id);
    },
  });
  const ask = (cmd: string, extra: object = {}) => new Promise<any>((r) => (pending.set(++id, r), proc.send({ id, cmd, ...extra })));
  return { readyP, ask, kill: () => proc.kill() };
}

console.error("starting peer");
const peer = child("--peer");
const fcm = await peer.readyP;
console.error("peer ready");
const t = await startTestCore();
const c = t.ctx.config;
const dispatcher = child("--dispatcher", {
  BENCH_DISPATCHER: JSON.stringify({ dataDir: c.dataDir, natsUrl: c.natsUrl, prefix: c.busPrefix, masterKey: c.masterKey.toString("base64"), fcm }),
});
await dispatcher.readyP;
console.error("dispatcher ready");
const u = await t.user({ plan: "team" });

async function scenario(n: number, minute: Date) {
  const app = (await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: `bench-${n}`, platform: "android" } })).body;
  const sa = makeServiceAccount();
  await peer.ask("sa", { sa });
  const put = await t.req("PUT", `/api/v3/apps/${app.id}/credentials/fcm`, { token: u.token, body: { service_account: sa } });
  if (put.status !== 200) throw new Error(`fcm credentials: ${put.status} ${JSON.stringify(put.body)}`);
  const seed0 = performance.now();
  const token = makeFcmToken();
  await t.ctx.db.execute(sql`insert into devices (app_id, install_token, platform, language, transport_type, transport_token, source)
    select ${app.id}, 'b' || g, 'android', 'en', 'fcm', ${token} || g, 'server' from generate_series(1, ${n}) g`);
  await t.ctx.db.execute(sql`analyze devices`);
  const seedS = (performance.now() - seed0) / 1000;
  const [pack] = await t.ctx.db.insert(pushPacks).values({ userId: u.id, name: "bench", fallbackLanguage: "en", isSystem: false, isPublished: false }).returning();
  const [lang] = await t.ctx.db.insert(packLanguages).values({ packId: pack!.id, languageCode: "en" }).returning();
  await t.ctx.db.insert(appPushPacks).values({ appId: app.id, packId: pack!.id });
  const dow = (minute.getUTCDay() + 6) % 7;
  await t.ctx.db.insert(packScheduledPushes).values({ languageId: lang!.id, dayOfWeek: dow, sendTime: minute.toISOString().slice(11, 16), title: "Hi {{external_id}} {Upper:deal}", body: "{Push={A|B}} deal" });

  // baseline: the bare keyset read of the audience
  const b0 = performance.now();
  let cursor = 0;
  for (;;) {
    const rows = (await t.ctx.db.execute(sql`select id, transport_token, language, tags from devices where app_id = ${app.id} and id > ${cursor} and not token_invalid order by id limit 500`)) as unknown as { id: string | number }[];
    const list = Array.isArray(rows) ? rows : ((rows as any).rows ?? []);
    if (list.length === 0) break;
    cursor = Number(list[list.length - 1].id);
  }
  const baseS = (performance.now() - b0) / 1000;

  const before = (await peer.ask("stats")).accepted as number;
  let peakCore = 0;
  let peakDisp = 0;
  const sampler = setInterval(async () => {
    peakCore = Math.max(peakCore, process.memoryUsage().rss);
    peakDisp = Math.max(peakDisp, (await dispatcher.ask("rss")).rss);
  }, 200);
  const t0 = performance.now();
  await runJob(t.ctx, t.core.jobs, "schedule-tick", new Date(minute.getTime() + 5_000));
  let accepted = 0;
  let fannedS = 0;
  for (;;) {
    accepted = (await peer.ask("stats")).accepted - before;
    if (!fannedS) {
      const r = await t.ctx.db.execute(sql`select count(*)::int as n from ${sends} where status = 'fanning'`);
      if (Number(((r as any).rows ?? r)[0].n) === 0) fannedS = (performance.now() - t0) / 1000;
    }
    if (accepted >= n) break;
    if (performance.now() - t0 > 600_000) break;
    if (process.env.BENCH_DEBUG) console.error("accepted", accepted, JSON.stringify(await t.ctx.db.execute(sql`select status, cursor, jobs, recipients from sends`)), (await peer.ask("stats")).byStatus);
    await Bun.sleep(100);
  }
  const sendS = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  await Bun.sleep(1000);
  const extra = (await peer.ask("stats")).accepted - before - n;
  const open = await t.ctx.db.execute(sql`select count(*)::int as n from ${sends} where status = 'fanning'`);
  const openN = Number(((open as any).rows ?? open)[0].n);
  const ok = accepted === n && extra === 0 && openN === 0;
  console.log(
    `${n.toLocaleString().padStart(9)} devices: seed ${seedS.toFixed(1)} s | baseline keyset read ${baseS.toFixed(1)} s | fan-out published ${fannedS.toFixed(1)} s | tick → last accepted ${sendS.toFixed(1)} s (${Math.round(n / sendS).toLocaleString()}/s) | peak RSS core ${(peakCore / 2 ** 20).toFixed(0)} MB, dispatcher ${(peakDisp / 2 ** 20).toFixed(0)} MB | ${ok ? "OK: each accepted once" : `FAIL accepted=${accepted} extra=${extra} open=${openN}`}`,
  );
  if (!ok) process.exitCode = 1;
}

try {
  // minutes well past the real clock, so the real-time tick never competes
  await scenario(SMALL, new Date("2031-06-02T10:00:00Z"));
  await scenario(N, new Date("2031-06-02T10:30:00Z"));
} finally {
  dispatcher.kill();
  peer.kill();
  await t.close();
}
process.exit(process.exitCode ?? 0);
