/**
 * Delivery throughput of the dispatcher's transports against the protocol peers, in one run:
 *
 *   bun bench/dispatch.ts      (BENCH_N=40000 recipients per HTTP/2 transport, BENCH_WP_N=8000,
 *                               BENCH_ONLY=fcm|apns|webpush for the ceiling and one transport)
 *
 * 1. Ceiling: raw HTTP/2 requests/s of a Bun (node:http2) client against the FCM peer, sending the
 *    same v1 request firebase-admin sends, over a few sessions with 100 streams each.
 * 2. Recipients rendered (@pushstack/templating, per recipient) and delivered per second through
 *    firebase-admin (sendEach), @parse/node-apn and web-push, each against its peer.
 * The peers run in a child process (the other core), so the figures are the dispatcher's; CPU per
 * recipient of both processes is printed to show where the time goes. Each figure is the best of 3
 * rounds (the machine is shared). Correctness is asserted every round (every recipient accepted once
 * by its peer, Web Push payloads decrypted); no time is asserted.
 */
import { compile, bindSend, seededRng, type RenderDevice } from "@pushstack/templating";
import {
  makeApnsDeviceToken, makeApnsKey, makeFcmToken, makeServiceAccount, makeVapidKeys,
  startApnsPeer, startFcmPeer, startWebPushPeer,
} from "@pushstack/testing";
import http2 from "node:http2";
import tls from "node:tls";
import { createApnsTransport, createFcmTransport, createWebPushTransport, ServiceAccountCredential, type AppCredentials, type SendItem, type Transport } from "../apps/dispatcher/src/transports";

const N = Number(process.env.BENCH_N ?? 40_000);
const WP_N = Number(process.env.BENCH_WP_N ?? 8_000);
const JOB = 500; // recipients per send job (SEND_JOB_MAX_RECIPIENTS)
const FCM_APPS = 4; // FCM quota is per project: 4 apps, 4 projects
const ONLY = process.env.BENCH_ONLY; // fcm | apns | webpush: run the ceiling and that transport only

// ---------------------------------------------------------------- child: the peers
if (process.argv.includes("--peers")) {
  const fcm = await startFcmPeer({ record: false });
  const apns = await startApnsPeer({ record: false });
  const wp = await startWebPushPeer({ record: false, verifyEvery: 4 });
  process.on("message", (m: any) => {
    const reply = (data: unknown) => process.send!({ id: m.id, data });
    if (m.cmd === "addServiceAccount") reply(fcm.addServiceAccount(m.sa));
    else if (m.cmd === "addApnsKey") reply(apns.addKey(m.key));
    else if (m.cmd === "subscribe") reply(Array.from({ length: m.n }, () => wp.subscribe().subscription));
    else if (m.cmd === "stats") reply({ fcm: { ...fcm.stats, connections: fcm.stats.connections }, apns: { ...apns.stats }, webpush: { ...wp.stats }, cpu: process.cpuUsage() });
    else if (m.cmd === "exit") process.exit(0);
  });
  process.send!({ ready: { fcm: { connectTo: fcm.connectTo, ca: fcm.ca, oauthTokenUrl: fcm.oauthTokenUrl }, apns: { connectTo: apns.connectTo, ca: apns.ca }, webpush: { host: wp.host, ca: wp.ca } } });
  await new Promise(() => {});
}

// ---------------------------------------------------------------- parent: the dispatcher side
let nextId = 1;
const pending = new Map<number, (d: any) => void>();
let ready: (v: any) => void;
const readyP = new Promise<any>((r) => (ready = r));
const child = Bun.spawn(["bun", import.meta.path, "--peers"], {
  stdio: ["ignore", "inherit", "inherit"],
  ipc(m: any) {
    if (m.ready) ready(m.ready);
    else pending.get(m.id)?.(m.data);
  },
});
const ask = (cmd: string, extra: object = {}) => new Promise<any>((r) => {
  const id = nextId++;
  pending.set(id, r);
  child.send({ id, cmd, ...extra });
});
const peers = await readyP;

function check(cond: boolean, what: string) {
  if (!cond) {
    console.error(`ASSERTION FAILED: ${what}`);
    child.kill();
    process.exit(1);
  }
}
const cpuSec = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1e6;
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

// --- rendering: one compiled push, bound once per job, rendered per recipient
const title = compile("{Hi|Hello|Hey} {{external_id}}!");
const body = compile("{Upper:good {TimeOfDay}} from {{app_name}}: 70% off in {{country}} today only, tap to go");
const LANGS = ["en", "es-MX", "pt-BR", "ru", "de", "tr", "id", "hi", null];
const device = (i: number): RenderDevice => ({
  external_id: `user-${i}`, language: LANGS[i % LANGS.length], country: ["BR", "IN", "ID", "TR", "MX"][i % 5], platform: "android", tz_sec: ((i * 7919) % 26) * 3600 - 12 * 3600,
});
const rng = seededRng(7);
function renderJob(appId: number, tokens: string[], offset: number): SendItem[] {
  const send = { now: new Date(), rotation: 0, app: { id: appId, name: "BetMax", app_link: null } };
  const t = bindSend(title, send);
  const b = bindSend(body, send);
  return tokens.map((token, k) => {
    const d = device(offset + k);
    return { recipient: { device_id: offset + k, token }, content: { msg_id: `m${appId}-${offset + k}`, title: t.render(d, rng), body: b.render(d, rng), click_url: "https://offer.example/landing?src=push" } };
  });
}

/** Runs every job of `jobs` with `parallel` of them in flight, as consumers pulling a stream would. */
async function run(t: Transport, jobs: { creds: AppCredentials; tokens: string[]; offset: number }[], parallel: number) {
  let okCount = 0;
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < jobs.length) {
      const j = jobs[next++];
      const res = await t.send(j.creds, renderJob(j.creds.appId, j.tokens, j.offset));
      okCount += res.filter((r) => r.ok).length;
    }
  }));
  const secs = (performance.now() - t0) / 1000;
  return { okCount, secs, cpu: cpuSec(process.cpuUsage(cpu0)) };
}

const jobsOf = (creds: AppCredentials[], total: number, token: (i: number) => string) =>
  Array.from({ length: Math.ceil(total / JOB) }, (_, j) => ({
    creds: creds[j % creds.length], offset: j * JOB, tokens: Array.from({ length: Math.min(JOB, total - j * JOB) }, (_, k) => token(j * JOB + k)),
  }));

console.log(`bench/dispatch: ${fmt(N)} recipients per HTTP/2 transport, ${fmt(WP_N)} for Web Push, jobs of ${JOB}; peers in a child process\n`);

// ---------------------------------------------------------------- 0. render only (for the split)
{
  const tokens = Array.from({ length: 5000 }, (_, i) => String(i));
  const t0 = performance.now();
  let chars = 0;
  for (let r = 0; r < 4; r++) for (const it of renderJob(1, tokens, r * 5000)) chars += it.content.title.length;
  const rate = 20_000 / ((performance.now() - t0) / 1000);
  check(chars > 0, "rendered text");
  console.log(`render only (title + body per recipient)          ${fmt(rate).padStart(9)} recipients/s`);
}

// ---------------------------------------------------------------- 1. ceiling: raw HTTP/2 against the FCM peer
const sas = Array.from({ length: FCM_APPS }, () => makeServiceAccount());
for (const sa of sas) await ask("addServiceAccount", { sa });
const ROUNDS = 3; // best of 3: the machine is shared, other work slows single rounds down
let ceiling = 0;
{
  const sa = sas[0];
  const { access_token } = await new ServiceAccountCredential(sa, { tokenUrl: peers.fcm.oauthTokenUrl, ca: peers.fcm.ca }).getAccessToken();
  const SESSIONS = 4;
  const STREAMS = 100; // FCM's MAX_CONCURRENT_STREAMS
  const path = `/v1/projects/${sa.project_id}/messages:send`;
  const round = async () => {
    const before = await ask("stats");
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    let ok = 0;
    let sent = 0;
    await Promise.all(Array.from({ length: SESSIONS }, () => new Promise<void>((done) => {
      const s = http2.connect("https://fcm.googleapis.com", {
        createConnection: () => tls.connect({ ...peers.fcm.connectTo, servername: "fcm.googleapis.com", ca: peers.fcm.ca, ALPNProtocols: ["h2"] }).setNoDelay(true),
      } as http2.SecureClientSessionOptions);
      let inflight = 0;
      const pump = () => {
        while (inflight < STREAMS && sent < N) {
          sent++;
          inflight++;
          const i = sent;
          const req = s.request({ ":method": "POST", ":path": path, authorization: `Bearer ${access_token}`, "content-type": "application/json" });
          let status = 0;
          req.on("response", (h) => (status = Number(h[":status"])));
          req.on("data", () => {});
          req.on("end", () => {
            inflight--;
            if (status === 200) ok++;
            if (sent >= N && inflight === 0) {
              s.close();
              done();
            } else pump();
          });
          req.end(JSON.stringify({ message: { token: makeFcmToken(), data: { msg_id: `c${i}`, title: "Hello user-1!", body: "GOOD MORNING from BetMax: 70% off in BR today only, tap to go" }, android: { priority: "HIGH", ttl: "86400s" } } }));
        }
      };
      pump();
    })));
    const secs = (performance.now() - t0) / 1000;
    const after = await ask("stats");
    check(ok === N && after.fcm.accepted - before.fcm.accepted === N, "ceiling: every raw request accepted");
    return { rate: N / secs, clientCpu: cpuSec(process.cpuUsage(cpu0)), peerCpu: cpuSec(after.cpu) - cpuSec(before.cpu) };
  };
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push(await round());
  const best = rounds.reduce((a, b) => (b.rate > a.rate ? b : a));
  ceiling = best.rate;
  console.log(
    `ceiling: raw HTTP/2 (Bun client, ${SESSIONS}x${STREAMS} streams) -> FCM peer ${fmt(ceiling).padStart(9)} requests/s   ` +
      `(rounds ${rounds.map((r) => fmt(r.rate)).join(", ")})   client ${(best.clientCpu * 1e6 / N).toFixed(1)} us CPU/request, peer ${(best.peerCpu * 1e6 / N).toFixed(1)}`,
  );
}

// ---------------------------------------------------------------- 2. transports
async function report(name: string, t: Transport, jobs: ReturnType<typeof jobsOf>, parallel: number, total: number, peerKey: "fcm" | "apns" | "webpush") {
  // warm-up: connections, tokens, JIT
  for (const c of new Set(jobs.map((j) => j.creds))) await t.send(c, renderJob(c.appId, jobs[0].tokens.slice(0, 50), 0));
  const rounds = [];
  for (let i = 0; i < ROUNDS; i++) {
    const before = await ask("stats");
    const r = await run(t, jobs, parallel);
    const after = await ask("stats");
    const accepted = after[peerKey].accepted - before[peerKey].accepted;
    check(r.okCount === total, `${name}: every recipient ok (${r.okCount}/${total})`);
    check(accepted === total, `${name}: the peer accepted each recipient once (${accepted}/${total})`);
    rounds.push({ rate: total / r.secs, cpu: r.cpu, peerCpu: cpuSec(after.cpu) - cpuSec(before.cpu), after });
  }
  const best = rounds.reduce((a, b) => (b.rate > a.rate ? b : a));
  const cpuUs = Math.min(...rounds.map((r) => r.cpu)) * 1e6 / total;
  console.log(
    `${name.padEnd(48)} ${fmt(best.rate).padStart(9)} recipients/s   ${(best.rate / ceiling * 100).toFixed(0).padStart(3)}% of ceiling   ` +
      `(rounds ${rounds.map((r) => fmt(r.rate)).join(", ")})   dispatcher ${cpuUs.toFixed(1)} us CPU/recipient, peer ${(best.peerCpu * 1e6 / total).toFixed(1)}`,
  );
  return { rate: best.rate, cpu: Math.min(...rounds.map((r) => r.cpu)), after: best.after };
}

if (!ONLY || ONLY === "fcm") {
  const fcm = createFcmTransport({ connectTo: peers.fcm.connectTo, ca: peers.fcm.ca, oauthTokenUrl: peers.fcm.oauthTokenUrl });
  const creds = sas.map((sa, i): AppCredentials => ({ appId: 100 + i, version: "1", fcm: { serviceAccount: sa } }));
  await report(`FCM: firebase-admin sendEach (${FCM_APPS} projects)`, fcm, jobsOf(creds, N, () => makeFcmToken()), 16, N, "fcm");
  await fcm.close();
}
if (!ONLY || ONLY === "apns") {
  const key = makeApnsKey();
  await ask("addApnsKey", { key: { ...key, bundleIds: ["com.example.bench"] } });
  const apns = createApnsTransport({ connectTo: peers.apns.connectTo, ca: peers.apns.ca });
  const creds: AppCredentials = { appId: 200, version: "1", apns: { keyP8: key.keyP8, keyId: key.keyId, teamId: key.teamId, bundleId: "com.example.bench", production: true } };
  await report("APNs: @parse/node-apn (1 app, 1 connection)", apns, jobsOf([creds], N, () => makeApnsDeviceToken()), 16, N, "apns");
  await apns.close();
}
if (!ONLY || ONLY === "webpush") {
  const subs: object[] = await ask("subscribe", { n: 1000 });
  const tokens = subs.map((s) => JSON.stringify(s));
  const wp = createWebPushTransport({ allowedHosts: [peers.webpush.host], ca: peers.webpush.ca });
  const creds: AppCredentials = { appId: 300, version: "1", webpush: { ...makeVapidKeys(), subject: "mailto:bench@pushstack.test" } };
  const r = await report("Web Push: web-push (aes128gcm per message)", wp, jobsOf([creds], WP_N, (i) => tokens[i % tokens.length]), 4, WP_N, "webpush");
  check(r.after.webpush.verified > 0, "Web Push: the peer decrypted and verified messages");
  console.log(`${"Web Push per dispatcher CPU core".padEnd(48)} ${fmt(WP_N / r.cpu).padStart(9)} recipients/s per core   (peer decrypted and checked 1 in 4: ${fmt(r.after.webpush.verified)} so far)`);
  await wp.close();
}

child.kill();
