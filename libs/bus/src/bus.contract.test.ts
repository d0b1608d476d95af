/**
 * One contract, two implementations: every test here runs on MemoryBus, and on NatsBus when
 * NATS_URL is set. Each test gets its own random prefix; NATS streams and buckets it made are
 * deleted afterwards. Timings are short (ackWait 300 ms) so the suite stays fast.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import {
  BusError,
  BusNoResponders,
  BusTimeout,
  BusUnavailable,
  createMemoryBus,
  createNatsBus,
  type Bus,
  type BusMessage,
  type KvEntry,
} from "./index";
import { rejection, text, uniquePrefix, waitFor } from "./testkit";

type Info = (stream: string) => Promise<{ messages: number; lastSeq: number }>;
interface Impl {
  name: string;
  make(prefix: string): Promise<{ bus: Bus; info: Info }>;
  cleanup(prefix: string): Promise<void>;
}

const NATS_URL = process.env.NATS_URL;
const impls: Impl[] = [
  {
    name: "memory",
    async make(prefix) {
      const bus = createMemoryBus({ prefix });
      return { bus, info: (s) => bus.streamInfo(s) };
    },
    async cleanup() {},
  },
];
if (NATS_URL) {
  impls.push({
    name: "nats",
    async make(prefix) {
      const bus = await createNatsBus({ url: NATS_URL, prefix, name: "bus-contract-test" });
      return { bus, info: (s) => bus.streamInfo(s) };
    },
    async cleanup(prefix) {
      const nc = await connect({ servers: NATS_URL });
      const jsm = await jetstreamManager(nc);
      for await (const name of jsm.streams.names()) {
        if (name.startsWith(`${prefix}_`) || name.startsWith(`KV_${prefix}_`)) await jsm.streams.delete(name);
      }
      await nc.close();
    },
  });
}

for (const impl of impls) {
  describe(`bus contract (${impl.name})`, () => {
    const opened: { bus: Bus; prefix: string }[] = [];
    async function setup(retention: "workqueue" | "limits" = "workqueue") {
      const prefix = uniquePrefix();
      const { bus, info } = await impl.make(prefix);
      opened.push({ bus, prefix });
      await bus.ensureStream({ name: "JOBS", subjects: ["jobs.>"], retention, duplicateWindowMs: 60_000 });
      return { bus, info };
    }
    afterEach(async () => {
      for (const { bus, prefix } of opened.splice(0)) {
        await bus.close();
        await impl.cleanup(prefix);
      }
    });

    /** Consumes into an array; `settle` decides what each handler call does (default ack). */
    async function collect(bus: Bus, durable: string, settle: (m: BusMessage) => void | Promise<void> = (m) => m.ack(), extra = {}) {
      const got: { seq: number; count: number; at: number; data: string }[] = [];
      const sub = await bus.consume({ stream: "JOBS", durable, ackWaitMs: 300, ...extra }, async (m) => {
        got.push({ seq: m.seq, count: m.deliveryCount, at: Date.now(), data: text(m.data) });
        await settle(m);
      });
      return { got, sub };
    }

    test("publish resolves with the stored seq; a repeated msgId is a duplicate", async () => {
      const { bus, info } = await setup();
      expect(await bus.publish("jobs.a", "one", { msgId: "m1" })).toEqual({ stream: "JOBS", seq: 1, duplicate: false });
      expect(await bus.publish("jobs.a", "one again", { msgId: "m1" })).toEqual({ stream: "JOBS", seq: 1, duplicate: true });
      expect(await bus.publish("jobs.b", "two", { msgId: "m2" })).toEqual({ stream: "JOBS", seq: 2, duplicate: false });
      const acks = await bus.publishMany!([1, 2, 3].map((i) => ({ subject: "jobs.c", data: `n${i}` })));
      expect(acks.map((a) => a.seq)).toEqual([3, 4, 5]);
      expect(await info("JOBS")).toEqual({ messages: 5, lastSeq: 5 });
    });

    test("consume delivers subject, data, headers and seq; acked messages are not redelivered", async () => {
      const { bus } = await setup();
      await bus.publish("jobs.x", JSON.stringify({ n: 1 }), { headers: { "X-Trace": "abc" } });
      await bus.publish("jobs.y", "plain");
      const seen: BusMessage[] = [];
      const sub = await bus.consume({ stream: "JOBS", durable: "w", ackWaitMs: 300 }, (m) => {
        seen.push(m);
        m.ack();
      });
      await waitFor(() => seen.length === 2, "two deliveries");
      expect(seen.map((m) => [m.subject, m.seq, m.deliveryCount])).toEqual([
        ["jobs.x", 1, 1],
        ["jobs.y", 2, 1],
      ]);
      expect(seen[0].json()).toEqual({ n: 1 });
      expect(seen[0].headers["X-Trace"]).toBe("abc");
      expect(text(seen[1].data)).toBe("plain");
      expect(() => seen[1].json()).toThrow(BusError);
      await Bun.sleep(450); // > ackWait: a missed ack would show as a redelivery
      expect(seen.length).toBe(2);
      await sub.stop();
    });

    test("an unacked message is redelivered after ackWait with deliveryCount 2", async () => {
      const { bus } = await setup();
      const { got, sub } = await collect(bus, "w", (m) => {
        if (m.deliveryCount > 1) m.ack();
      });
      await bus.publish("jobs.a", "x");
      await waitFor(() => got.length === 2, "redelivery");
      expect(got.map((g) => g.count)).toEqual([1, 2]);
      expect(got[1].at - got[0].at).toBeGreaterThanOrEqual(250);
      await Bun.sleep(400);
      expect(got.length).toBe(2);
      await sub.stop();
    });

    test("nak() redelivers at once, nak(delay) after the delay", async () => {
      const { bus } = await setup();
      const { got, sub } = await collect(bus, "w", (m) => {
        if (m.deliveryCount === 1) m.nak(m.data[0] === 100 /* "d" */ ? 450 : undefined);
        else m.ack();
      }, { ackWaitMs: 5000 });
      await bus.publish("jobs.a", "now");
      await waitFor(() => got.length === 2, "immediate redelivery");
      expect(got[1].at - got[0].at).toBeLessThan(250);
      await bus.publish("jobs.a", "delayed");
      await waitFor(() => got.length === 4, "delayed redelivery");
      expect(got.slice(2).map((g) => [g.data, g.count])).toEqual([
        ["delayed", 1],
        ["delayed", 2],
      ]);
      expect(got[3].at - got[2].at).toBeGreaterThanOrEqual(400);
      await sub.stop();
    });

    test("term() stops redelivery; working() extends the deadline", async () => {
      const { bus } = await setup();
      let slowDone = false;
      const { got, sub } = await collect(bus, "w", async (m) => {
        if (text(m.data) === "term") return m.term();
        for (let i = 0; i < 4; i++) {
          await Bun.sleep(150); // 600 ms of work under a 300 ms ackWait
          m.working();
        }
        m.ack();
        slowDone = true;
      });
      await bus.publish("jobs.a", "term");
      await bus.publish("jobs.a", "slow");
      await waitFor(() => slowDone, "slow handler");
      await Bun.sleep(400);
      expect(got.map((g) => [g.data, g.count])).toEqual([
        ["term", 1],
        ["slow", 1],
      ]);
      await sub.stop();
    });

    test("maxDeliver caps deliveries; a throwing handler gets a redelivery", async () => {
      const { bus } = await setup();
      const { got, sub } = await collect(bus, "w", (m) => {
        if (text(m.data) === "boom") {
          if (m.deliveryCount === 1) throw new Error("handler failed");
          return m.ack();
        }
        m.nak();
      }, { maxDeliver: 3 });
      await bus.publish("jobs.a", "never");
      await bus.publish("jobs.a", "boom");
      await waitFor(() => got.filter((g) => g.data === "boom").length === 2, "retry after throw", 3000);
      await Bun.sleep(400);
      expect(got.filter((g) => g.data === "never").map((g) => g.count)).toEqual([1, 2, 3]);
      expect(got.filter((g) => g.data === "boom").map((g) => g.count)).toEqual([1, 2]);
      await sub.stop();
    });

    test("two subscribers of one durable share the messages without duplicates", async () => {
      const { bus } = await setup();
      const seen = new Map<string, number[]>([["a", []], ["b", []]]);
      const subs = await Promise.all(
        ["a", "b"].map((who) =>
          bus.consume({ stream: "JOBS", durable: "shared", ackWaitMs: 2000, batch: 1 }, async (m) => {
            seen.get(who)!.push(m.seq);
            await Bun.sleep(15);
            m.ack();
          }),
        ),
      );
      await bus.publishMany!(Array.from({ length: 30 }, (_, i) => ({ subject: "jobs.s", data: String(i) })));
      await waitFor(() => seen.get("a")!.length + seen.get("b")!.length >= 30, "30 deliveries");
      await Bun.sleep(300);
      const all = [...seen.get("a")!, ...seen.get("b")!].sort((x, y) => x - y);
      expect(all).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      expect(seen.get("a")!.length).toBeGreaterThan(0);
      expect(seen.get("b")!.length).toBeGreaterThan(0);
      await Promise.all(subs.map((s) => s.stop()));
    });

    test("concurrency bounds the handlers running at once", async () => {
      const { bus } = await setup();
      let running = 0;
      let peak = 0;
      let done = 0;
      const sub = await bus.consume({ stream: "JOBS", durable: "c", concurrency: 3 }, async (m) => {
        peak = Math.max(peak, ++running);
        await Bun.sleep(30);
        running--;
        done++;
        m.ack();
      });
      await bus.publishMany!(Array.from({ length: 12 }, () => ({ subject: "jobs.c", data: "x" })));
      await waitFor(() => done === 12, "12 handled");
      expect(peak).toBe(3);
      await sub.stop();
    });

    test("a work queue drops acked messages; a limits stream keeps them for other durables", async () => {
      const wq = await setup("workqueue");
      await wq.bus.publishMany!([1, 2, 3].map((i) => ({ subject: "jobs.w", data: String(i) })));
      const a = await collect(wq.bus, "w", (m) => (m.seq === 2 ? undefined : m.ack()), { ackWaitMs: 5000 });
      await waitFor(() => a.got.length === 3, "three deliveries");
      await waitFor(async () => (await wq.info("JOBS")).messages === 1, "work queue removal");
      await a.sub.stop();

      const lim = await setup("limits");
      await lim.bus.publishMany!([1, 2, 3].map((i) => ({ subject: "jobs.l", data: String(i) })));
      const first = await collect(lim.bus, "one");
      await waitFor(() => first.got.length === 3, "first durable");
      const second = await collect(lim.bus, "two");
      await waitFor(() => second.got.length === 3, "second durable replays");
      expect((await lim.info("JOBS")).messages).toBe(3);
      await first.sub.stop();
      await second.sub.stop();
    });

    test("maxAge drops old messages (the duplicate window shrinks to fit it)", async () => {
      const { bus, info } = await setup();
      await bus.ensureStream({ name: "TEMP", subjects: ["temp.>"], maxAgeMs: 300, retention: "limits" });
      await bus.publish("temp.a", "x");
      expect((await info("TEMP")).messages).toBe(1);
      await waitFor(async () => (await info("TEMP")).messages === 0, "expiry", 3000);
    });

    test("request/reply, queue groups, no responders, timeout, failing responder", async () => {
      const { bus } = await setup();
      const echo = await bus.reply("svc.echo", (data, headers) => `${text(data).toUpperCase()}:${headers["X-Who"] ?? ""}`);
      expect(text(await bus.request("svc.echo", "hi", { headers: { "X-Who": "me" } }))).toBe("HI:me");

      const counts = { a: 0, b: 0 };
      const members = await Promise.all(
        (["a", "b"] as const).map((who) =>
          bus.reply("svc.work.*", () => {
            counts[who]++;
            return who;
          }, { queue: "workers" }),
        ),
      );
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => bus.request(`svc.work.${i}`, "x")));
      expect(answers.length).toBe(40);
      expect(counts.a + counts.b).toBe(40); // one member of the group per request
      expect(counts.a).toBeGreaterThan(0);
      expect(counts.b).toBeGreaterThan(0);

      expect((await rejection(bus.request("svc.nobody", "x"))).err).toBeInstanceOf(BusNoResponders);

      const slow = await bus.reply("svc.slow", () => Bun.sleep(800).then(() => "late"));
      const t = await rejection(bus.request("svc.slow", "x", { timeoutMs: 300 }));
      expect(t.err).toBeInstanceOf(BusTimeout);
      expect(t.ms).toBeGreaterThanOrEqual(250);
      expect(t.ms).toBeLessThan(700);

      const broken = await bus.reply("svc.broken", () => {
        throw new Error("nope");
      });
      const b = await rejection(bus.request("svc.broken", "x", { timeoutMs: 2000 }));
      expect(b.err).toBeInstanceOf(BusError);
      expect(b.err).not.toBeInstanceOf(BusTimeout);
      expect(b.err.message).toContain("nope");

      for (const s of [echo, ...members, slow, broken]) await s.stop();
      expect((await rejection(bus.request("svc.echo", "x"))).err).toBeInstanceOf(BusNoResponders);
    });

    test("kv put/get/delete/keys and watch (replay, then live)", async () => {
      const { bus } = await setup();
      const kv = await bus.kv("cfg");
      const r1 = await kv.put("a", JSON.stringify({ v: 1 }));
      const r2 = await kv.put("b", "two");
      expect(r2).toBeGreaterThan(r1);
      const a = await kv.get("a");
      expect(a && [a.key, a.revision, a.operation, a.json()]).toEqual(["a", r1, "PUT", { v: 1 }]);
      expect(await kv.get("missing")).toBeNull();
      await kv.put("gone", "x");
      await kv.delete("gone");
      expect(await kv.get("gone")).toBeNull();
      expect(await kv.keys()).toEqual(["a", "b"]);

      const events: KvEntry[] = [];
      const w = await kv.watch((e) => events.push(e));
      expect(events.map((e) => [e.key, e.operation, text(e.value)])).toEqual([
        ["a", "PUT", '{"v":1}'],
        ["b", "PUT", "two"],
      ]);
      const r3 = await kv.put("c", "three");
      await kv.delete("a");
      await waitFor(() => events.length === 4, "live events");
      expect(events.slice(2).map((e) => [e.key, e.operation])).toEqual([
        ["c", "PUT"],
        ["a", "DEL"],
      ]);
      expect(events[2].revision).toBe(r3);
      await w.stop();
      await kv.put("d", "after stop");
      await Bun.sleep(100);
      expect(events.length).toBe(4);
      expect(await (await bus.kv("cfg")).keys()).toEqual(["b", "c", "d"]);
    });

    test("bad input is refused with BusError; a closed bus with BusUnavailable", async () => {
      const { bus } = await setup();
      const bad: Array<() => Promise<unknown>> = [
        () => bus.publish("jobs..a", "x"),
        () => bus.publish("jobs.*", "x"),
        () => bus.publish("nowhere.a", "x"),
        () => bus.publish("jobs.a", 42 as unknown as string),
        () => bus.publish("jobs.a", "x", { headers: { "Bad Header": "x" } }),
        () => bus.ensureStream({ name: "has.dot", subjects: ["x.>"] }),
        () => bus.consume({ stream: "NOPE", durable: "d" }, () => {}),
        () => bus.consume({ stream: "JOBS", durable: "bad name" }, () => {}),
        () => bus.request("svc.a", "x", { timeoutMs: -1 }),
        () => bus.kv("bad.bucket"),
        async () => (await bus.kv("ok")).put("bad key", "x"),
        async () => (await bus.kv("ok")).get(".dot"),
      ];
      for (const f of bad) expect((await rejection(f())).err).toBeInstanceOf(BusError);
      expect(bus.isConnected()).toBe(true);
      await bus.close();
      expect(bus.isConnected()).toBe(false);
      expect((await rejection(bus.publish("jobs.a", "x"))).err).toBeInstanceOf(BusUnavailable);
    });
  });
}

describe.if(!!NATS_URL)("nats only", () => {
  test("publish and request reject quickly while the server is unreachable", async () => {
    const bus = await createNatsBus({ url: "nats://127.0.0.1:1", prefix: uniquePrefix("down"), connectWaitMs: 100 });
    expect(bus.isConnected()).toBe(false);
    const p = await rejection(bus.publish("jobs.a", "x"));
    expect(p.err).toBeInstanceOf(BusUnavailable);
    expect(p.ms).toBeLessThan(3000);
    const r = await rejection(bus.request("svc.a", "x"));
    expect(r.err).toBeInstanceOf(BusUnavailable);
    expect(r.ms).toBeLessThan(3000);
    await bus.close();
  });
});
