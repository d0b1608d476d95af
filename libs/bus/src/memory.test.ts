/**
 * MemoryBus only: durability with dataDir (journal, crash = the object dropped without close(),
 * then a new bus on the same directory), compaction, torn tails, KV files, and unref'd timers.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryBus, type MemoryBus } from "./index";
import { text, waitFor } from "./testkit";

const root = mkdtempSync(join(tmpdir(), "bus-mem-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshDir = () => join(root, String(++n));
const leftovers: MemoryBus[] = [];
afterAll(async () => {
  for (const b of leftovers) await b.close();
});

async function open(dataDir: string, retention: "workqueue" | "limits" = "workqueue", compactBytes?: number) {
  const bus = createMemoryBus({ prefix: "ps", dataDir, compactBytes });
  await bus.ensureStream({ name: "JOBS", subjects: ["jobs.>"], retention, duplicateWindowMs: 60_000 });
  return bus;
}

describe("MemoryBus with dataDir", () => {
  test("after a crash, unacked messages are redelivered and acked ones are not; dedup survives", async () => {
    const dir = freshDir();
    const before = await open(dir);
    for (let i = 1; i <= 5; i++) await before.publish("jobs.a", `m${i}`, { msgId: `id${i}` });
    let crashed = false;
    const firstRun: number[] = [];
    await before.consume({ stream: "JOBS", durable: "w", ackWaitMs: 300, concurrency: 5 }, (m) => {
      if (crashed) return; // the dropped object's timers still fire in this process; ignore them
      firstRun.push(m.seq);
      if (m.seq <= 2) m.ack();
    });
    await waitFor(() => firstRun.length === 5, "first deliveries");
    await before.flush(); // acks are written lazily; a real crash may lose them (then: a redelivery)
    crashed = true;
    leftovers.push(before); // "crash": no close()

    const after = await open(dir);
    expect(await after.streamInfo("JOBS")).toEqual({ messages: 3, lastSeq: 5 });
    const again: string[] = [];
    const sub = await after.consume({ stream: "JOBS", durable: "w", ackWaitMs: 300 }, (m) => {
      again.push(text(m.data));
      m.ack();
    });
    await waitFor(() => again.length === 3, "redeliveries after restart");
    await Bun.sleep(400);
    expect(again).toEqual(["m3", "m4", "m5"]);
    expect(await after.publish("jobs.a", "dup", { msgId: "id1" })).toEqual({ stream: "JOBS", seq: 1, duplicate: true });
    expect(await after.publish("jobs.a", "new", { msgId: "id6" })).toEqual({ stream: "JOBS", seq: 6, duplicate: false });
    await sub.stop();
    await after.close();
  });

  test("a limits stream keeps every message and remembers each durable's acks", async () => {
    const dir = freshDir();
    const before = await open(dir, "limits");
    await before.publishMany(["a", "b", "c"].map((d) => ({ subject: "jobs.l", data: d })));
    const got: string[] = [];
    await before.consume({ stream: "JOBS", durable: "one", ackWaitMs: 5000 }, (m) => {
      got.push(text(m.data));
      if (text(m.data) !== "b") m.ack();
    });
    await waitFor(() => got.length === 3, "deliveries");
    await before.close();

    const after = await open(dir, "limits");
    expect((await after.streamInfo("JOBS")).messages).toBe(3);
    const one: string[] = [];
    const two: string[] = [];
    for (const [durable, into] of [["one", one], ["two", two]] as const) {
      await after.consume({ stream: "JOBS", durable, ackWaitMs: 5000 }, (m) => {
        into.push(text(m.data));
        m.ack();
      });
    }
    await waitFor(() => one.length === 1 && two.length === 3, "deliveries after restart");
    expect(one).toEqual(["b"]);
    expect(two).toEqual(["a", "b", "c"]);
    await after.close();
  });

  test("the journal is compacted once it outgrows the live messages, and stays readable", async () => {
    const dir = freshDir();
    const file = join(dir, "bus", "ps_JOBS.jsonl");
    const bus = await open(dir, "workqueue", 20_000);
    const payload = "x".repeat(200);
    await bus.publishMany(Array.from({ length: 400 }, (_, i) => ({ subject: "jobs.c", data: payload, opts: { msgId: `c${i}` } })));
    const grown = statSync(file).size;
    expect(grown).toBeGreaterThan(100_000);
    let acked = 0;
    const sub = await bus.consume({ stream: "JOBS", durable: "w", concurrency: 50 }, (m) => {
      if (m.seq <= 398) m.ack();
      acked++;
    });
    await waitFor(() => acked === 400, "all handled");
    await bus.publish("jobs.c", "tail"); // its group commit triggers the compaction
    await bus.flush();
    expect(statSync(file).size).toBeLessThan(40_000);
    expect(readdirSync(join(dir, "bus")).sort()).toEqual(["ps_JOBS.jsonl"]);
    await sub.stop();
    await bus.close();

    appendFileSync(file, '{"t":"m","s":999,"j":"jobs.c","d":"'); // torn write at the end
    const again = await open(dir);
    expect(await again.streamInfo("JOBS")).toEqual({ messages: 3, lastSeq: 401 });
    expect(await again.publish("jobs.c", "dup", { msgId: "c5" })).toMatchObject({ seq: 6, duplicate: true });
    expect(await again.publish("jobs.c", "next")).toMatchObject({ seq: 402, duplicate: false });
    await again.close();
    const third = await open(dir);
    expect(await third.streamInfo("JOBS")).toEqual({ messages: 4, lastSeq: 402 });
    await third.close();
  });

  test("expired messages leave the journal; a limits durable's ack floor survives compaction", async () => {
    const dir = freshDir();
    const file = join(dir, "bus", "ps_JOBS.jsonl");
    const mk = async () => {
      const bus = createMemoryBus({ prefix: "ps", dataDir: dir, compactBytes: 5000 });
      await bus.ensureStream({ name: "JOBS", subjects: ["jobs.>"], retention: "limits", maxAgeMs: 300 });
      return bus;
    };
    const before = await mk();
    await before.publishMany(Array.from({ length: 100 }, (_, i) => ({ subject: "jobs.e", data: "y".repeat(200) + i })));
    let handled = 0;
    const sub = await before.consume({ stream: "JOBS", durable: "one", ackWaitMs: 5000, concurrency: 10 }, (m) => {
      handled++;
      if (m.seq !== 100) m.ack();
    });
    await waitFor(() => handled === 100, "first pass");
    await sub.stop();
    await Bun.sleep(400); // everything so far expires
    await before.publish("jobs.e", "fresh");
    await before.flush();
    expect(statSync(file).size).toBeLessThan(2000);
    await before.close();

    const after = await mk();
    expect(await after.streamInfo("JOBS")).toEqual({ messages: 1, lastSeq: 101 });
    const got: number[] = [];
    await after.consume({ stream: "JOBS", durable: "one", ackWaitMs: 5000 }, (m) => {
      got.push(m.seq);
      m.ack();
    });
    await waitFor(() => got.length === 1, "fresh message");
    await Bun.sleep(50);
    expect(got).toEqual([101]);
    await after.close();
  });

  test("KV values and revisions survive a restart", async () => {
    const dir = freshDir();
    const before = createMemoryBus({ dataDir: dir });
    const kv = await before.kv("settings");
    await Promise.all([kv.put("a", "1"), kv.put("b", "2"), kv.put("c", "3")]);
    await kv.delete("b");
    const rev = await kv.put("a", "11");
    leftovers.push(before); // no close(): each change was on disk before it resolved

    const after = createMemoryBus({ dataDir: dir });
    const kv2 = await after.kv("settings");
    expect(await kv2.keys()).toEqual(["a", "c"]);
    expect(text((await kv2.get("a"))!.value)).toBe("11");
    expect((await kv2.get("a"))!.revision).toBe(rev);
    expect(await kv2.put("d", "4")).toBe(rev + 1);
    await after.close();
  });
});

describe("MemoryBus timers", () => {
  test("pending redeliveries and KV watchers never keep a process alive", async () => {
    const entry = join(import.meta.dir, "index.ts");
    const script = `
      import { createMemoryBus } from ${JSON.stringify(entry)};
      const bus = createMemoryBus();
      await bus.ensureStream({ name: "S", subjects: ["s.>"] });
      await bus.consume({ stream: "S", durable: "d", ackWaitMs: 60000 }, (m) => m.nak(60000));
      await bus.publish("s.a", "x");
      await (await bus.kv("k")).watch(() => {});
      await new Promise((r) => setTimeout(r, 50));
      console.log("done");
    `;
    const t = Date.now();
    const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    const killer = setTimeout(() => proc.kill(), 4000);
    const code = await proc.exited;
    clearTimeout(killer);
    expect(await new Response(proc.stdout).text()).toContain("done");
    expect(code).toBe(0);
    expect(Date.now() - t).toBeLessThan(3500);
  });
});
