/**
 * Sending a scheduled pack push to a large app, end to end (needs PostgreSQL and NATS):
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres NATS_URL=nats://127.0.0.1:4222 bun bench/sending.ts [sizes...]
 *
 *   sizes             audience sizes, default "100000 1000000" (or BENCH_SMALL / BENCH_N)
 *   BENCH_DISPATCHERS dispatcher process counts to run every size with, default "1,2"
 *   BENCH_WARMUP      devices of an unreported first run per dispatcher count (JIT warm-up), default 20000
 *   BENCH_CONCURRENCY, BENCH_FCM (JSON FcmTransportOptions): dispatcher settings (default: production's)
 *   BENCH_PROF=dispatcher,peer: CPU profiles of those children (markdown) in BENCH_PROF_DIR
 *   BENCH_SMOL=1      dispatchers under `bun --smol` (smaller heap, more GC)
 *   BENCH_DEBUG=1     progress lines
 *
 * Processes, as deployed: core (this one: the tick, the fan-out pump, the results consumer), one or more
 * dispatchers (children, one durable consumer shared) and the FCM peer (child). For each size the devices
 * are seeded in bulk (INSERT ... SELECT generate_series, then VACUUM ANALYZE and a checkpoint, as an
 * established app's table would be), the `schedule-tick` job runs for the push's minute and the clock
 * stops when the peer has accepted the last recipient.
 *
 * Printed per run: tick → all jobs published (core's fan-out), tick → last accepted, recipients/s (per
 * dispatcher process and per dispatcher CPU-second), CPU seconds per process group over that span (core,
 * dispatchers, peer, PostgreSQL backends, nats-server; during and after the fan-out; per recipient) beside
 * other processes' CPU, idle time and the hypervisor's steal, peak RSS of core, each dispatcher and the
 * peer (VmHWM, reset before each run after a collection) and per quarter of the audience accepted (a
 * plateau is flat memory), and the baselines measured in the same run: a bare keyset read of the audience
 * in pages of 500 (the floor of the fan-out's database work, and a gauge of the machine's speed at that
 * moment) and, per dispatcher count, the ratios largest/smallest size. The load average is printed with
 * every run: the VM's speed varies over time, so compare figures within one run (bench/sending.md).
 *
 * The dispatcher's FCM per-project quota (600k/min, FCM's own) is lifted here, else it alone bounds one
 * app at 600k recipients a minute. Correctness asserted, never a time: every device accepted by the peer
 * exactly once (a per-device counter in the peer: no device missing, none twice, nothing accepted after
 * the end), every accepted message rendered alike (same title and body: one variant per send), no send
 * left fanning, and core's results consumer counted each recipient once (send_stats_daily sent = size).
 */
import { sql } from "drizzle-orm";
import { createLogger, silentLogger, loadConfig } from "@pushstack/config";
import { createBus } from "@pushstack/bus";
import { makeFcmToken, makeServiceAccount, startFcmPeer } from "@pushstack/testing";
import { startDispatcher } from "@pushstack/dispatcher";
import { appPushPacks, packLanguages, packScheduledPushes, pushPacks, sends } from "@pushstack/schema";
import { startTestCore } from "../apps/core/src/testing/harness";
import { runJob } from "../apps/core/src/modules/jobs";
import { cpuBetween, loadAvg, machineBusySeconds, peakRssBytes, stealSeconds, pidsNamed, resetPeak, rssBytes, snapshot, type Group } from "./procstat";

const argSizes = process.argv.slice(2).filter((a) => /^\d+$/.test(a)).map(Number);
const SIZES = argSizes.length ? argSizes : [Number(process.env.BENCH_SMALL ?? 100_000), Number(process.env.BENCH_N ?? 1_000_000)];
const DISPATCHERS = (process.env.BENCH_DISPATCHERS ?? "1,2").split(",").map(Number).filter((k) => k >= 1);
const DEBUG = !!process.env.BENCH_DEBUG;
const CORES = navigator.hardwareConcurrency;
const WARMUP = Number(process.env.BENCH_WARMUP ?? 20_000);

// ------------------------------------------------------------ children
if (process.argv.includes("--peer")) {
  // Per-device acceptance counts: tokens are `<prefix><g>` with g = 1..n, one per seeded device.
  let track: { prefix: string; counts: Uint8Array; title: string | null; body: string | null; mismatched: number; foreign: number } | null = null;
  const fcm = await startFcmPeer({
    record: false,
    onAccept(m) {
      const t = track;
      if (!t) return;
      const g = m.token.startsWith(t.prefix) ? Number(m.token.slice(t.prefix.length)) : NaN;
      if (!(g >= 1 && g < t.counts.length)) return void t.foreign++;
      if (t.counts[g]! < 255) t.counts[g]!++;
      const d = m.message.data ?? {};
      if (t.title === null) (t.title = d.title), (t.body = d.body);
      else if (d.title !== t.title || d.body !== t.body) t.mismatched++;
    },
  });
  process.on("message", (m: any) => {
    const reply = (data: unknown = null) => process.send!({ id: m.id, data });
    if (m.cmd === "exit") process.exit(0);
    else if (m.cmd === "gc") Bun.gc(true), reply();
    else if (m.cmd === "sa") fcm.addServiceAccount(m.sa), reply();
    else if (m.cmd === "track") (track = { prefix: m.prefix, counts: new Uint8Array(m.n + 1), title: null, body: null, mismatched: 0, foreign: 0 }), reply();
    else if (m.cmd === "stats") reply({ accepted: fcm.stats.accepted, byStatus: fcm.stats.byStatus, connections: fcm.stats.connections });
    else if (m.cmd === "check") {
      const t = track!;
      let missing = 0;
      let twice = 0;
      for (let g = 1; g < t.counts.length; g++) {
        if (t.counts[g] === 0) missing++;
        else if (t.counts[g]! > 1) twice++;
      }
      reply({ missing, twice, mismatched: t.mismatched, foreign: t.foreign, sample: { title: t.title, body: t.body } });
    }
  });
  process.send!({ ready: { connectTo: fcm.connectTo, ca: fcm.ca, oauthTokenUrl: fcm.oauthTokenUrl } });
  await new Promise(() => {});
}
if (process.argv.includes("--dispatcher")) {
  const opts = JSON.parse(process.env.BENCH_DISPATCHER!);
  const config = loadConfig({ DATA_DIR: opts.dataDir, NATS_URL: opts.natsUrl, BUS_PREFIX: opts.prefix, MASTER_KEY: opts.masterKey, JWT_SECRET: "x".repeat(40) });
  const bus = await createBus({ natsUrl: config.natsUrl, prefix: config.busPrefix });
  // production defaults unless BENCH_CONCURRENCY (jobs at once) / BENCH_FCM (JSON FcmTransportOptions) say otherwise
  const concurrency = process.env.BENCH_CONCURRENCY ? Number(process.env.BENCH_CONCURRENCY) : undefined;
  const fcmOpts = JSON.parse(process.env.BENCH_FCM ?? "{}");
  await startDispatcher({ config, log: DEBUG ? createLogger("debug") : silentLogger, bus, concurrency, transports: { fcm: { ...opts.fcm, ...fcmOpts, projectMessagesPerMinute: 1e9 } } });
  process.on("message", (m: any) => {
    if (m.cmd === "exit") process.exit(0);
    if (m.cmd === "gc") Bun.gc(true), process.send!({ id: m.id, data: null });
  });
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
  // BENCH_PROF=dispatcher,peer: CPU profiles (markdown) of those children in BENCH_PROF_DIR (default /tmp/bench-prof)
  const prof = (process.env.BENCH_PROF ?? "").split(",").includes(flag.slice(2))
    ? ["--cpu-prof", "--cpu-prof-md", `--cpu-prof-dir=${process.env.BENCH_PROF_DIR ?? "/tmp/bench-prof"}`, `--cpu-prof-name=${flag.slice(2)}-${Date.now()}.md`]
    : [];
  // BENCH_SMOL=1: dispatchers run with `bun --smol` (smaller heap, more frequent GC): the memory/CPU trade
  const smol = process.env.BENCH_SMOL && flag === "--dispatcher" ? ["--smol"] : [];
  const proc = Bun.spawn(["bun", ...smol, ...prof, import.meta.path, flag], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "inherit", "inherit"],
    ipc(m: any) {
      if (m.ready) ready(m.ready);
      else pending.get(m.id)?.(m.data), pending.delete(m.id);
    },
  });
  const ask = (cmd: string, extra: object = {}) => new Promise<any>((r) => (pending.set(++id, r), proc.send({ id, cmd, ...extra })));
  // a clean exit, so a profiler writes its file
  const kill = async () => {
    if (prof.length) proc.send({ cmd: "exit" });
    else proc.kill();
    await proc.exited;
  };
  return { readyP, ask, pid: proc.pid, kill, exited: proc.exited };
}
const rows = (r: unknown): any[] => (Array.isArray(r) ? r : ((r as any).rows ?? []));
const mb = (b: number) => `${(b / 2 ** 20).toFixed(0)} MB`;

console.error("starting peer");
const peer = child("--peer");
const fcm = await peer.readyP;
const t = await startTestCore();
const c = t.ctx.config;
const dispatcherEnv = { BENCH_DISPATCHER: JSON.stringify({ dataDir: c.dataDir, natsUrl: c.natsUrl, prefix: c.busPrefix, masterKey: c.masterKey.toString("base64"), fcm }) };
const dispatchers: ReturnType<typeof child>[] = [];
async function useDispatchers(k: number) {
  while (dispatchers.length > k) {
    await dispatchers.pop()!.kill();
  }
  while (dispatchers.length < k) {
    const d = child("--dispatcher", dispatcherEnv);
    await d.readyP;
    dispatchers.push(d);
  }
}
const natsPid = () => pidsNamed("nats-server");
const pgPids = () => pidsNamed("postgres");
const groups = (): Group[] => [
  { name: "core", pids: () => [process.pid] },
  { name: "dispatchers", pids: () => dispatchers.map((d) => d.pid) },
  { name: "peer", pids: () => [peer.pid] },
  { name: "postgres", pids: pgPids },
  { name: "nats", pids: natsPid },
];
const u = await t.user({ plan: "team" });
let minuteNo = 0;

interface Run { n: number; k: number; sendS: number; fannedS: number; baseS: number; rss: Record<string, number>; ok: boolean }

async function scenario(n: number, k: number, report = true): Promise<Run> {
  // minutes well past the real clock, so the real-time tick never competes
  const minute = new Date(Date.UTC(2031, 5, 2, 10, minuteNo++ * 5));
  const app = (await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: `bench-${n}-${k}`, platform: "android" } })).body;
  const sa = makeServiceAccount();
  await peer.ask("sa", { sa });
  const put = await t.req("PUT", `/api/v3/apps/${app.id}/credentials/fcm`, { token: u.token, body: { service_account: sa } });
  if (put.status !== 200) throw new Error(`fcm credentials: ${put.status} ${JSON.stringify(put.body)}`);
  const seed0 = performance.now();
  const token = makeFcmToken();
  await t.ctx.db.execute(sql`insert into devices (app_id, install_token, platform, language, transport_type, transport_token, source)
    select ${app.id}, 'b' || g, 'android', 'en', 'fcm', ${token} || g, 'server' from generate_series(1, ${n}) g`);
  await t.ctx.db.execute(sql`vacuum (analyze) devices`);
  await t.ctx.db.execute(sql`checkpoint`).catch(() => {});
  const seedS = (performance.now() - seed0) / 1000;
  await peer.ask("track", { prefix: token, n });
  const [pack] = await t.ctx.db.insert(pushPacks).values({ userId: u.id, name: "bench", fallbackLanguage: "en", isSystem: false, isPublished: false }).returning();
  const [lang] = await t.ctx.db.insert(packLanguages).values({ packId: pack!.id, languageCode: "en" }).returning();
  await t.ctx.db.insert(appPushPacks).values({ appId: app.id, packId: pack!.id });
  const dow = (minute.getUTCDay() + 6) % 7;
  await t.ctx.db.insert(packScheduledPushes).values({ languageId: lang!.id, dayOfWeek: dow, sendTime: minute.toISOString().slice(11, 16), title: "Hi {{external_id}} {Upper:deal}", body: "{Push={A|B}} deal" });

  // baseline: the bare keyset read of the audience
  const b0 = performance.now();
  let cursor = 0;
  for (;;) {
    const list = rows(await t.ctx.db.execute(sql`select id, transport_token, language, tags from devices where app_id = ${app.id} and id > ${cursor} and not token_invalid order by id limit 500`));
    if (list.length === 0) break;
    cursor = Number(list[list.length - 1].id);
  }
  const baseS = (performance.now() - b0) / 1000;

  const watched = { core: process.pid, peer: peer.pid, ...Object.fromEntries(dispatchers.map((d, i) => [`dispatcher${i + 1}`, d.pid])) };
  // a collected heap before each run, so "before the tick" compares across runs (no other effect on the run)
  Bun.gc(true);
  await Promise.all([peer, ...dispatchers].map((p) => p.ask("gc")));
  const idle = Object.fromEntries(Object.entries(watched).map(([name, pid]) => [name, rssBytes(pid)]));
  // RSS over the run: the largest seen in each quarter of the audience accepted (a plateau is flat memory)
  const quarters: Record<string, number[]> = Object.fromEntries(Object.keys(watched).map((k) => [k, [0, 0, 0, 0]]));
  let progress = 0;
  const canReset = Object.values(watched).every(resetPeak);
  const sampled: Record<string, number> = {};
  const sampler = setInterval(() => {
    const q = Math.min(3, Math.floor(progress * 4));
    for (const [name, pid] of Object.entries(watched)) {
      const r = rssBytes(pid);
      sampled[name] = Math.max(sampled[name] ?? 0, r);
      quarters[name]![q] = Math.max(quarters[name]![q]!, r);
    }
  }, 100);
  const before = (await peer.ask("stats")).accepted as number;
  const load0 = loadAvg();
  const cpu0 = snapshot(groups());
  const busy0 = machineBusySeconds();
  const steal0 = stealSeconds();
  const t0 = performance.now();
  await runJob(t.ctx, t.core.jobs, "schedule-tick", new Date(minute.getTime() + 5_000));
  let accepted = 0;
  let fannedS = 0;
  let acceptedAtFanned = 0;
  let cpuFanned = cpu0;
  for (;;) {
    accepted = (await peer.ask("stats")).accepted - before;
    progress = accepted / n;
    if (!fannedS) {
      const open = rows(await t.ctx.db.execute(sql`select count(*)::int as n from ${sends} where status = 'fanning'`));
      if (Number(open[0].n) === 0) (fannedS = (performance.now() - t0) / 1000), (acceptedAtFanned = accepted), (cpuFanned = snapshot(groups()));
    }
    if (accepted >= n) break;
    if (performance.now() - t0 > 600_000) break;
    if (DEBUG) console.error("accepted", accepted, JSON.stringify(rows(await t.ctx.db.execute(sql`select status, cursor, jobs, recipients from sends`))), (await peer.ask("stats")).byStatus);
    await Bun.sleep(50);
  }
  const sendS = (performance.now() - t0) / 1000;
  const cpu1 = snapshot(groups());
  const busy = machineBusySeconds() - busy0;
  const steal = stealSeconds() - steal0;
  const load1 = loadAvg();
  clearInterval(sampler);
  const rss: Record<string, number> = {};
  for (const [name, pid] of Object.entries(watched)) rss[name] = canReset ? Math.max(peakRssBytes(pid), sampled[name] ?? 0) : (sampled[name] ?? 0);

  // results: core's consumer records each recipient once (wait for it, bounded)
  let counted = 0;
  const r0 = performance.now();
  for (;;) {
    counted = Number(rows(await t.ctx.db.execute(sql`select coalesce(sum(sent), 0)::bigint as n from send_stats_daily where app_id = ${app.id}`))[0].n);
    if (counted >= n || performance.now() - r0 > 60_000) break;
    await Bun.sleep(100);
  }
  const resultsS = (performance.now() - t0) / 1000;
  await Bun.sleep(1000);
  const extra = (await peer.ask("stats")).accepted - before - n;
  const check = await peer.ask("check");
  const openN = Number(rows(await t.ctx.db.execute(sql`select count(*)::int as n from ${sends} where status = 'fanning'`))[0].n);
  const ok = accepted === n && extra === 0 && check.missing === 0 && check.twice === 0 && check.mismatched === 0 && check.foreign === 0 && openN === 0 && counted === n;
  if (!report) {
    if (!ok) throw new Error(`warm-up run failed: accepted=${accepted} extra=${extra} ${JSON.stringify(check)} open=${openN} counted=${counted}`);
    return { n, k, sendS, fannedS, baseS, rss: {}, ok };
  }

  const all = cpuBetween(cpu0, cpu1);
  const fan = cpuBetween(cpu0, cpuFanned);
  const tail = cpuBetween(cpuFanned, cpu1);
  const cpuLine = (x: Record<string, number>) => Object.entries(x).map(([g, s]) => `${g} ${s.toFixed(1)}`).join(", ");
  const totalCpu = Object.values(all).reduce((a, b) => a + b, 0);
  console.log(
    `${n.toLocaleString().padStart(9)} devices, ${k} dispatcher${k > 1 ? "s" : " "}: tick → last accepted ${sendS.toFixed(1)} s (${Math.round(n / sendS).toLocaleString()}/s) | fan-out published ${fannedS.toFixed(1)} s (${Math.round((acceptedAtFanned / n) * 100)}% accepted by then) | results counted ${resultsS.toFixed(1)} s | ${ok ? "OK: each device accepted once, rendered alike, counted once" : `FAIL accepted=${accepted} extra=${extra} missing=${check.missing} twice=${check.twice} mismatched=${check.mismatched} foreign=${check.foreign} open=${openN} counted=${counted}`}\n` +
      `    peak RSS: ${Object.entries(rss).map(([p, b]) => `${p} ${mb(b)} (${mb(idle[p]!)} before the tick)`).join(", ")}${canReset ? "" : " (sampled every 100 ms)"}\n` +
      `      by quarter of the audience accepted: ${Object.entries(quarters).map(([p, q]) => `${p} ${q.map((b) => (b / 2 ** 20).toFixed(0)).join("/")}`).join(", ")} MB\n` +
      `    CPU s, tick → last accepted: ${cpuLine(all)}; ours ${totalCpu.toFixed(1)}, other processes ${Math.max(0, busy - totalCpu).toFixed(1)}, idle ${Math.max(0, sendS * CORES - busy - steal).toFixed(1)}, stolen by the hypervisor ${steal.toFixed(1)} (${CORES} cores × ${sendS.toFixed(1)} s)\n` +
      `      during fan-out (${fannedS.toFixed(1)} s): ${cpuLine(fan)}; after: ${cpuLine(tail)}\n` +
      `      µs per recipient: ${Object.entries(all).map(([g, s]) => `${g} ${((s / n) * 1e6).toFixed(1)}`).join(", ")}; per dispatcher process ${Math.round(n / sendS / k).toLocaleString()}/s, ${Math.round(n / all.dispatchers!).toLocaleString()} per dispatcher CPU-second\n` +
      `    baseline keyset read ${baseS.toFixed(1)} s | seed ${seedS.toFixed(1)} s | load average ${load0} → ${load1}${DEBUG ? ` | rendered ${JSON.stringify(check.sample)}` : ""}`,
  );
  if (!ok) process.exitCode = 1;
  return { n, k, sendS, fannedS, baseS, rss, ok };
}

try {
  const runs: Run[] = [];
  for (const k of DISPATCHERS) {
    await useDispatchers(k);
    // not reported: JIT warm-up of the new processes, so the first reported size is not a cold start
    if (WARMUP > 0) await scenario(WARMUP, k, false);
    for (const n of SIZES) runs.push(await scenario(n, k));
  }
  // Memory flat in the audience: RSS at the largest size against the smallest, per dispatcher count.
  if (SIZES.length > 1) {
    for (const k of DISPATCHERS) {
      const rs = runs.filter((r) => r.k === k).sort((a, b) => a.n - b.n);
      const lo = rs[0]!;
      const hi = rs[rs.length - 1]!;
      const ratio = (name: string) => `${name} ${mb(lo.rss[name]!)} → ${mb(hi.rss[name]!)} (×${(hi.rss[name]! / lo.rss[name]!).toFixed(2)})`;
      console.log(
        `${k} dispatcher${k > 1 ? "s" : ""}, ${lo.n.toLocaleString()} → ${hi.n.toLocaleString()} devices (×${(hi.n / lo.n).toFixed(0)}): time ×${(hi.sendS / lo.sendS).toFixed(2)}, keyset read ×${(hi.baseS / lo.baseS).toFixed(2)}; peak RSS ${Object.keys(hi.rss).map(ratio).join(", ")}`,
      );
    }
  }
} finally {
  await Promise.all([...dispatchers.map((d) => d.kill()), peer.kill()]);
  await t.close();
}
process.exit(process.exitCode ?? 0);
