import { randomBytes } from "node:crypto";
import { BusTimeout, type Bus } from "@pushstack/bus";

/** The edge is over its own limit of requests waiting for the stream: shed load instead of queueing. */
export class IngestOverloaded extends Error {
  override name = "IngestOverloaded";
}

interface Waiter {
  resolve(): void;
  reject(e: Error): void;
}

export interface BatcherOptions {
  subject: string;
  /** Items per stream message. Default 256. */
  maxItems?: number;
  /** Bytes of items per stream message (NATS allows 1 MiB by default). Default 256 KiB. */
  maxBytes?: number;
  /** Stream messages awaiting their ack at once. Default 4. */
  maxInFlight?: number;
  /** Items waiting for a message beyond which add() refuses at once. Default 20,000. */
  maxQueued?: number;
  /**
   * Least time between two messages, ms, unless one fills up. Default 2. An item arriving when the
   * last message left longer ago than this goes out on the next tick (no added latency at low load);
   * under load, messages leave at most every `lingerMs` and carry everything that arrived meanwhile.
   */
  lingerMs?: number;
}

/**
 * Group commit onto the ingest stream. Items that arrive while earlier messages await their ack are
 * gathered into one stream message (a batch), so the stream stores one message per few hundred
 * requests under load, while at low load an item goes out on the next tick, alone. Each add()
 * resolves once the stream has acknowledged the message holding the item, and rejects if it did not:
 * the caller answers 200 only then. Every item gets a unique id (`<message id>.<index>`); the message
 * id is the JetStream de-duplication id, so the one republish after a lost ack cannot store it twice.
 */
export class IngestBatcher {
  private queue: string[] = [];
  private waiters: Waiter[] = [];
  private queuedBytes = 0;
  private inFlight = 0;
  private scheduled = false;
  private lastCut = 0;
  private readonly lingerMs: number;
  private readonly maxItems: number;
  private readonly maxBytes: number;
  private readonly maxInFlight: number;
  private readonly maxQueued: number;
  /** Totals since start (monitoring, benchmarks). */
  readonly stats = { messages: 0, items: 0, failedMessages: 0 };

  constructor(
    private readonly bus: () => Bus,
    private readonly opts: BatcherOptions,
  ) {
    this.maxItems = opts.maxItems ?? 256;
    this.maxBytes = opts.maxBytes ?? 256 * 1024;
    this.maxInFlight = opts.maxInFlight ?? 4;
    this.maxQueued = opts.maxQueued ?? 20_000;
    this.lingerMs = opts.lingerMs ?? 2;
  }

  /** Queues an item (a non-empty object; its `id` is added). Resolves when the stream stored it. */
  add(item: Record<string, unknown>): Promise<void> {
    if (this.queue.length >= this.maxQueued) return Promise.reject(new IngestOverloaded("too many requests waiting for the ingest stream"));
    // serialised once, now; the id is put in front when the message is cut
    const text = JSON.stringify(item);
    return new Promise<void>((resolve, reject) => {
      this.queue.push(text);
      this.waiters.push({ resolve, reject });
      this.queuedBytes += text.length + 1;
      this.schedule();
    });
  }

  get pending(): number {
    return this.queue.length;
  }

  private schedule(): void {
    if (this.inFlight >= this.maxInFlight) return; // the next ack pumps
    if (this.queue.length >= this.maxItems || this.queuedBytes >= this.maxBytes) {
      this.pump();
      return;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      this.pump();
    };
    // everything that arrives in this turn of the event loop (or the linger) rides along
    const wait = this.lastCut + this.lingerMs - performance.now();
    if (wait <= 0) setImmediate(run);
    else setTimeout(run, wait);
  }

  private pump(): void {
    if (this.queue.length > 0 && this.inFlight < this.maxInFlight) this.lastCut = performance.now();
    while (this.queue.length > 0 && this.inFlight < this.maxInFlight) {
      let n = 0;
      let bytes = 0;
      while (n < this.queue.length && n < this.maxItems && (n === 0 || bytes + this.queue[n]!.length < this.maxBytes)) bytes += this.queue[n++]!.length + 1;
      const items = this.queue.splice(0, n);
      const waiters = this.waiters.splice(0, n);
      this.queuedBytes -= bytes;
      void this.send(items, waiters);
    }
  }

  private async send(items: string[], waiters: Waiter[]): Promise<void> {
    this.inFlight++;
    // 96 random bits: unique for all time in practice, and short (it is repeated in every item id)
    const msgId = randomBytes(12).toString("base64url");
    // item ids "<msgId>.<index>": unique, and fixed for the life of the message
    const body = `{"v":1,"items":[${items.map((t, i) => `{"id":"${msgId}.${i}",${t.slice(1)}`).join(",")}]}`;
    const publish = () => this.bus().publish(this.opts.subject, body, { msgId });
    try {
      // no ack in time: stored or not, a second publish with the same id is stored at most once
      await publish().catch((err) => {
        if (err instanceof BusTimeout && this.bus().isConnected()) return publish();
        throw err;
      });
      this.stats.messages++;
      this.stats.items += items.length;
      for (const w of waiters) w.resolve();
    } catch (err) {
      this.stats.failedMessages++;
      for (const w of waiters) w.reject(err as Error);
    } finally {
      this.inFlight--;
      if (this.queue.length) this.schedule();
    }
  }
}
