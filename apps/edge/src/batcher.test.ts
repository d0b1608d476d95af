import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { BusTimeout, createBus, type Bus } from "@pushstack/bus";
import { IngestBatcher, IngestOverloaded } from "./batcher";

// the bus this run uses: NATS JetStream when NATS_URL is set, in-process otherwise
let bus: Bus;
beforeAll(async () => {
  bus = await createBus({ natsUrl: process.env.NATS_URL, prefix: `tb${randomBytes(4).toString("hex")}` });
  await bus.ensureStream({ name: "B", subjects: ["b.>"], retention: "workqueue" });
});
afterAll(() => bus.close());

/** Reads every stored message of durable `name` (acking them) until `items` items were seen. */
async function drain(subject: string, durable: string, items: number, lingerMs = 0) {
  const got: Array<{ msgId: string; items: Array<{ id: string; n: number }>; bytes: number }> = [];
  let seen = 0;
  let done!: () => void;
  const all = new Promise<void>((r) => (done = r));
  const sub = await bus.consume({ stream: "B", durable, filterSubject: subject }, (m) => {
    const body = m.json<{ v: number; items: Array<{ id: string; n: number }> }>();
    got.push({ msgId: m.headers["Nats-Msg-Id"]!, items: body.items, bytes: m.data.length });
    m.ack();
    seen += body.items.length;
    if (seen >= items) done();
  });
  await Promise.race([all, Bun.sleep(10_000)]);
  await Bun.sleep(lingerMs); // anything beyond the expected would show up meanwhile
  await sub.stop();
  return got;
}

test("concurrent items share stream messages; each resolves once stored; ids are unique per item", async () => {
  const b = new IngestBatcher(() => bus, { subject: "b.one" });
  await Promise.all(Array.from({ length: 1000 }, (_, n) => b.add({ kind: "test", n })));
  expect(b.stats.items).toBe(1000);
  expect(b.stats.messages).toBeLessThan(50);
  const msgs = await drain("b.one", "one", 1000);
  const items = msgs.flatMap((m) => m.items);
  expect(items.map((i) => i.n).sort((x, y) => x - y)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
  expect(new Set(items.map((i) => i.id)).size).toBe(1000);
  for (const m of msgs) m.items.forEach((it, i) => expect(it.id).toBe(`${m.msgId}.${i}`));
});

test("messages respect maxItems and maxBytes", async () => {
  const b = new IngestBatcher(() => bus, { subject: "b.two", maxItems: 10, maxBytes: 4096 });
  await Promise.all(Array.from({ length: 100 }, (_, n) => b.add({ n, pad: "x".repeat(n % 2 ? 1000 : 10) })));
  const msgs = await drain("b.two", "two", 100);
  expect(msgs.flatMap((m) => m.items)).toHaveLength(100);
  for (const m of msgs) {
    expect(m.items.length).toBeLessThanOrEqual(10);
    expect(m.bytes).toBeLessThan(4096 + 1200);
  }
});

test("a failed publish rejects every item of its message (nothing answered 200)", async () => {
  const b = new IngestBatcher(() => bus, { subject: "nostream.here" });
  const rs = await Promise.allSettled(Array.from({ length: 20 }, (_, n) => b.add({ n })));
  expect(rs.every((r) => r.status === "rejected")).toBe(true);
  expect(b.stats.items).toBe(0);
  expect(b.stats.failedMessages).toBeGreaterThan(0);
});

test("past maxQueued, add() refuses at once instead of queueing without bound", async () => {
  const b = new IngestBatcher(() => bus, { subject: "b.three", maxQueued: 10 });
  const rs = await Promise.allSettled(Array.from({ length: 30 }, (_, n) => b.add({ n })));
  const refused = rs.filter((r) => r.status === "rejected");
  expect(refused).toHaveLength(20);
  expect((refused[0] as PromiseRejectedResult).reason).toBeInstanceOf(IngestOverloaded);
  expect(rs.filter((r) => r.status === "fulfilled")).toHaveLength(10);
  await drain("b.three", "three", 10);
});

test("a lost ack is retried once with the same message id (stored once)", async () => {
  const ids: string[] = [];
  let calls = 0;
  const flaky = {
    isConnected: () => true,
    publish: async (subject: string, data: Uint8Array | string, opts?: { msgId?: string }) => {
      ids.push(opts!.msgId!);
      if (++calls === 1) {
        await bus.publish(subject, data, opts); // stored, but the ack "never arrives"
        throw new BusTimeout("no ack");
      }
      return bus.publish(subject, data, opts);
    },
  } as unknown as Bus;
  const b = new IngestBatcher(() => flaky, { subject: "b.four" });
  await Promise.all(Array.from({ length: 5 }, (_, n) => b.add({ n })));
  expect(ids).toHaveLength(2);
  expect(ids[0]).toBe(ids[1]!);
  const msgs = await drain("b.four", "four", 5, 300);
  expect(msgs).toHaveLength(1);
  expect(msgs[0]!.items).toHaveLength(5);
});
