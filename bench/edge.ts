/**
 * GET /postback on the edge, answered only once JetStream stored it, against the ceiling of this
 * machine: a bare Bun.serve answering a small JSON. Both run as child processes and are loaded by
 * autocannon from this process with the same settings, one after the other, in one run.
 *
 *   bun bench/edge.ts     NATS_URL (default nats://127.0.0.1:4222), BENCH_SEC (10), CONNECTIONS (64), PIPELINING (1)
 *
 * Printed: requests/s, p50/p99 latency, errors, the edge's peak RSS, the ratio to the ceiling, and how
 * the edge batched. Asserted (no time is): every request the edge answered 200 is in the stream, and
 * nothing else is there beyond the requests still in flight when the load stopped.
 */
// @ts-ignore autocannon ships no type declarations; the little used here is typed below
import autocannonImpl from "autocannon";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { createNatsBus } from "@pushstack/bus";
import { IngestSubjects, Subjects } from "@pushstack/schema";

type Result = { requests: { average: number }; latency: { p50: number; p99: number }; errors: number; non2xx: number; "2xx": number };
const autocannon = autocannonImpl as (opts: Record<string, unknown>, cb: (err: Error | null, res: Result) => void) => void;

const NATS_URL = process.env.NATS_URL || "nats://127.0.0.1:4222";
const SECONDS = Number(process.env.BENCH_SEC ?? 10);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 64);
const PIPELINING = Number(process.env.PIPELINING ?? 1);
const ROOT = join(import.meta.dir, "..");
const prefix = `bench${randomBytes(3).toString("hex")}`;

function fail(msg: string): never {
  console.error(`FAILED: ${msg}`);
  process.exit(1);
}

/** Spawns `bun ...args`; resolves once it printed a port (a bare number line, or a `listening` log line). */
async function spawn(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn(["bun", ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdout: "pipe", stderr: "inherit" });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  const end = Date.now() + 30_000;
  while (Date.now() < end) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value);
    for (const line of buf.split("\n")) {
      if (/^[0-9]+$/.test(line.trim())) return { proc, port: Number(line.trim()) };
      try {
        const rec = JSON.parse(line);
        if (rec.msg === "listening" && rec.port) {
          void (async () => {
            while (!(await reader.read()).done);
          })();
          return { proc, port: rec.port as number };
        }
      } catch {}
    }
  }
  proc.kill("SIGKILL");
  fail(`${args.join(" ")} did not start`);
}

function load(url: string | string[], seconds: number): Promise<Result> {
  const urls = Array.isArray(url) ? url : [url];
  const u = new URL(urls[0]!);
  return new Promise((resolve, reject) =>
    autocannon(
      {
        url: `${u.protocol}//${u.host}`,
        requests: urls.map((x) => ({ method: "GET", path: new URL(x).pathname + new URL(x).search })),
        connections: CONNECTIONS,
        pipelining: PIPELINING,
        duration: seconds,
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    ),
  );
}

const rssMb = (pid: number) => {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
};

// ---- the edge's world: one app in the directory, as core would have written it --------------------
const admin = await createNatsBus({ url: NATS_URL, prefix });
if (!admin.isConnected()) fail(`no NATS at ${NATS_URL}`);
await admin.ensureStream({ name: IngestSubjects.stream, subjects: [...IngestSubjects.streamSubjects], retention: "workqueue" });
const kv = await admin.kv(Subjects.appDirectoryBucket);
await kv.put("1", JSON.stringify({ id: 1, user_id: 1, archived: false, postback_token: "t", platform: "android", plan: "team", subscription_status: "active", updated_at: new Date().toISOString() }));

const raw = await spawn(["-e", `const s = Bun.serve({ port: 0, fetch: () => Response.json({ status: "ok" }) }); console.log(s.port);`]);
const edge = await spawn(["apps/edge/src/main.ts"], {
  PORT: "0",
  NATS_URL,
  BUS_PREFIX: prefix,
  DATA_DIR: mkdtempSync(join(tmpdir(), "ps-bench-")),
  POSTBACK_RATE_LIMIT: "1000000000", // one client address
  LOG_LEVEL: "info",
});
for (let i = 0; ; i++) {
  if ((await fetch(`http://127.0.0.1:${edge.port}/healthz`)).status === 200) break;
  if (i > 100) fail("edge never became ready");
  await Bun.sleep(100);
}

const rawUrl = `http://127.0.0.1:${raw.port}/postback?app_id=1&external_id=bench&event=dep`;
const edgeUrls = Array.from({ length: 8 }, (_, i) => `http://127.0.0.1:${edge.port}/postback?app_id=1&external_id=bench-${i}&event=dep&offer=o${i}`);

console.log(`warming up (2 s each); then ${SECONDS} s each, ${CONNECTIONS} connections, pipelining ${PIPELINING}`);
await load(rawUrl, 2);
const warm = await load(edgeUrls, 2);
const ceiling = await load(rawUrl, SECONDS);
let peakRss = rssMb(edge.proc.pid);
const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(edge.proc.pid))), 200);
const measured = await load(edgeUrls, SECONDS);
clearInterval(sampler);
peakRss = Math.max(peakRss, rssMb(edge.proc.pid));
raw.proc.kill();
edge.proc.kill("SIGTERM");
await edge.proc.exited;

// ---- correctness: what the edge said it stored is in the stream ----------------------------------
const answered200 = warm["2xx"] + measured["2xx"];
let items = 0;
let messages = 0;
const sub = await admin.consume({ stream: IngestSubjects.stream, durable: "bench", batch: 256 }, (m) => {
  items += m.json<{ items: unknown[] }>().items.length;
  messages++;
  m.ack();
});
for (let last = -1; items !== last; ) {
  last = items;
  await Bun.sleep(1500);
}
await sub.stop();
await admin.close();

const row = (name: string, r: Result, rss: string) =>
  `${name.padEnd(28)}${Math.round(r.requests.average).toLocaleString("en").padStart(10)}${String(r.latency.p50).padStart(8)}${String(r.latency.p99).padStart(8)}${String(r.errors + r.non2xx).padStart(8)}${rss.padStart(10)}`;
console.log("");
console.log(`${"".padEnd(28)}${"req/s".padStart(10)}${"p50 ms".padStart(8)}${"p99 ms".padStart(8)}${"errors".padStart(8)}${"RSS MB".padStart(10)}`);
console.log(row("Bun.serve, small JSON", ceiling, "-"));
console.log(row("edge GET /postback (durable)", measured, peakRss.toFixed(0)));
console.log("");
console.log(`edge / ceiling: ${((measured.requests.average / ceiling.requests.average) * 100).toFixed(0)}%`);
console.log(`stream: ${items.toLocaleString("en")} postbacks in ${messages.toLocaleString("en")} messages (${(items / Math.max(1, messages)).toFixed(0)} per message)`);

if (measured.non2xx || measured.errors) fail(`edge answered ${measured.non2xx} non-2xx, ${measured.errors} errors`);
if (items < answered200) fail(`${answered200} answered 200 but only ${items} stored`);
if (items > answered200 + CONNECTIONS * PIPELINING * 2) fail(`${items} stored for ${answered200} answered 200`);
console.log(`ok: all ${answered200.toLocaleString("en")} postbacks answered 200 are in the stream (${items - answered200} more were in flight at the stop)`);
process.exit(0);
