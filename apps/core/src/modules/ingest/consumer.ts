import { Value } from "@sinclair/typebox/value";
import { IngestItem, IngestSubjects, type IngestItem as Item } from "@pushstack/schema";
import type { BusMessage, Subscription } from "@pushstack/bus";
import type { CoreContext } from "../../context";
import { processPostback } from "./postback";
import { processInfo, processNotification, processSdkEvent } from "./sdk";

/** A deterministic failure of one item (bad data, a bug) stops retrying it after this many deliveries. */
const POISON_AFTER = 3;
/** Unacked this long, a message goes to another consumer: how soon work is resumed after a core dies. */
const ACK_WAIT_MS = 10_000;

export function processItem(ctx: CoreContext, item: Item): Promise<void> {
  switch (item.kind) {
    case "postback":
      return processPostback(ctx, item);
    case "info":
      return processInfo(ctx, item);
    case "notification":
      return processNotification(ctx, item);
    case "sdk_event":
      return processSdkEvent(ctx, item);
  }
}

/** SQLSTATE of a database error, through drizzle's wrapping. */
function sqlState(err: unknown): string | null {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++) {
    if (typeof e.code === "string" && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
  }
  return null;
}

/** Data and integrity errors, or a query the database cannot run, fail the same way every time. */
export function isPermanent(err: unknown): boolean {
  const state = sqlState(err);
  return !!state && ["22", "23", "42"].includes(state.slice(0, 2));
}

/** Items that must be applied in stream order: those of one user (postbacks) or one device (SDK). */
function orderKey(item: Item): string {
  return item.kind === "postback" ? `p:${item.app_id}:${item.external_id}` : `d:${item.device_id}`;
}

/**
 * One stream message: a batch of items from one edge. Messages are taken one at a time (the consumer's
 * concurrency is 1), so items keep the order the edges stored them in: a device's `events` list and
 * deposit numbers follow arrival order. Within a batch, items of different users/devices run in
 * parallel (up to `parallel` at once), those of one user/device one after the other.
 *
 * Each item is applied in its own transaction and idempotently, so on any failure the whole message
 * is nak'ed (redelivered with backoff) and the redelivery skips what was done. A malformed message or
 * item is logged and dropped (retrying cannot fix it); an item failing deterministically is dropped
 * after POISON_AFTER deliveries; anything else (database down, deadlock) is retried for as long as it takes.
 */
export async function handleBatch(ctx: CoreContext, msg: BusMessage, parallel = 8): Promise<void> {
  let batch: { v?: unknown; items?: unknown } | null = null;
  try {
    batch = msg.json();
  } catch {}
  if (!batch || batch.v !== 1 || !Array.isArray(batch.items)) {
    ctx.log.error("ingest message dropped: not a batch", { seq: msg.seq });
    msg.term();
    return;
  }
  const groups = new Map<string, Item[]>();
  for (const raw of batch.items) {
    if (!Value.Check(IngestItem, raw)) {
      ctx.log.error("ingest item dropped: invalid", { seq: msg.seq, id: (raw as { id?: unknown })?.id });
      continue;
    }
    const key = orderKey(raw);
    const g = groups.get(key);
    if (g) g.push(raw);
    else groups.set(key, [raw]);
  }
  let failure: unknown = null;
  // keep the message ours while we work (a slow database must not cause a redelivery meanwhile)
  const heartbeat = setInterval(() => msg.working(), ACK_WAIT_MS / 3);
  const runGroup = async (items: Item[]) => {
    for (const item of items) {
      if (failure) return;
      try {
        await processItem(ctx, item);
      } catch (err) {
        if (isPermanent(err) && msg.deliveryCount >= POISON_AFTER) {
          ctx.log.error("ingest item dropped after repeated failures", { seq: msg.seq, id: item.id, kind: item.kind, err });
          continue;
        }
        failure ??= err;
        ctx.log.warn("ingest batch will be retried", { seq: msg.seq, delivery: msg.deliveryCount, id: item.id, err });
        return; // the rest of this user's items wait for the redelivery, in order
      }
    }
  };
  const queue = [...groups.values()];
  try {
    await Promise.all(
      Array.from({ length: Math.min(parallel, queue.length) }, async () => {
        for (let g = queue.shift(); g; g = queue.shift()) await runGroup(g);
      }),
    );
  } finally {
    clearInterval(heartbeat);
  }
  if (failure) throw failure; // the bus naks with backoff
  msg.ack();
}

export async function startIngestConsumer(ctx: CoreContext): Promise<Subscription> {
  await ctx.bus.ensureStream({ name: IngestSubjects.stream, subjects: [...IngestSubjects.streamSubjects], retention: "workqueue" });
  return ctx.bus.consume(
    {
      stream: IngestSubjects.stream,
      durable: IngestSubjects.consumer,
      ackWaitMs: ACK_WAIT_MS,
      // an acknowledged postback is never given up on: a database outage only delays it
      maxDeliver: -1,
      // one message at a time keeps stream order; the parallelism is inside a batch (handleBatch)
      concurrency: 1,
    },
    (msg) => handleBatch(ctx, msg),
  );
}
