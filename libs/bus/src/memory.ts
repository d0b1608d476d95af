/**
 * MemoryBus: the Bus in-process, for embedded mode (`bun run start` without NATS) and tests.
 * Same semantics as NatsBus (the contract suite runs on both). With `dataDir`, streams are
 * journaled to `dataDir/bus/<prefix>_<stream>.jsonl` and KV buckets to `dataDir/bus/kv_<prefix>_<bucket>.json`,
 * so what publish() acknowledged survives a restart.
 */
import { join } from "node:path";
import { Journal } from "./journal";
import { MemConsumer, MemSub } from "./memconsumer";
import { MemKv } from "./memkv";
import { MemStream } from "./memstream";
import {
  BusError,
  BusNoResponders,
  BusTimeout,
  BusUnavailable,
  type Bus,
  type ConsumeOptions,
  type KvBucket,
  type MessageHandler,
  type PublishAck,
  type PublishItem,
  type PublishOptions,
  type ReplyHandler,
  type RequestOptions,
  type StreamConfig,
  type Subscription,
} from "./types";
import {
  checkHeaders,
  checkName,
  checkPositive,
  checkSubject,
  subjectMatches,
  subjectsCollide,
  toBytes,
} from "./util";

export interface MemoryBusOptions {
  prefix?: string;
  /** Persist streams and KV under `${dataDir}/bus/`. Without it everything is lost with the process. */
  dataDir?: string;
  /** How a queue group member is chosen for a request. Default "random" (as NATS). */
  queuePick?: "random" | "round-robin";
  /** Journal size from which compaction is considered. Default 4 MiB. */
  compactBytes?: number;
}

interface Responder {
  pattern: string;
  queue?: string;
  handler: ReplyHandler;
  running: Set<Promise<unknown>>;
}

export function createMemoryBus(opts: MemoryBusOptions = {}): MemoryBus {
  return new MemoryBus(opts);
}

export class MemoryBus implements Bus {
  readonly kind = "memory" as const;
  readonly prefix: string;
  private readonly streams = new Map<string, Promise<MemStream>>();
  /** The opened ones, for a synchronous lookup on the publish path (keeps publish order, too). */
  private readonly opened = new Map<string, MemStream>();
  private readonly buckets = new Map<string, Promise<MemKv>>();
  private readonly responders = new Set<Responder>();
  private readonly subs = new Set<Subscription>();
  private readonly rr = new Map<string, number>();
  private closed = false;

  constructor(private readonly opts: MemoryBusOptions = {}) {
    this.prefix = checkName("prefix", opts.prefix ?? "ps");
    if (opts.dataDir !== undefined && (typeof opts.dataDir !== "string" || opts.dataDir === "")) {
      throw new BusError("dataDir must be a non-empty path");
    }
  }

  isConnected(): boolean {
    return !this.closed;
  }

  private open(): void {
    if (this.closed) throw new BusUnavailable("bus is closed");
  }

  private file(name: string): string | null {
    return this.opts.dataDir ? join(this.opts.dataDir, "bus", name) : null;
  }

  async ensureStream(cfg: StreamConfig): Promise<void> {
    this.open();
    const name = checkName("stream", cfg?.name);
    if (!Array.isArray(cfg.subjects) || cfg.subjects.length === 0) throw new BusError("stream needs subjects");
    cfg.subjects.forEach((s) => checkSubject(s, true));
    checkPositive("duplicateWindowMs", cfg.duplicateWindowMs, 1);
    checkPositive("maxAgeMs", cfg.maxAgeMs, 1);
    for (const [other, p] of this.streams) {
      if (other === name) continue;
      const s = await p;
      if (s.cfg.subjects.some((a) => cfg.subjects.some((b) => subjectsCollide(a, b)))) {
        throw new BusError(`subjects of stream ${name} overlap with stream ${other}`);
      }
    }
    const existing = this.streams.get(name);
    if (existing) {
      (await existing).configure(cfg);
      return;
    }
    const p = (async () => {
      const file = this.file(`${this.prefix}_${name}.jsonl`);
      let s: MemStream;
      if (!file) s = new MemStream(name, cfg, null);
      else {
        const { journal, records } = await Journal.open(file, this.opts.compactBytes);
        s = new MemStream(name, cfg, journal);
        s.load(records);
      }
      this.opened.set(name, s);
      return s;
    })();
    this.streams.set(name, p);
    p.catch(() => this.streams.delete(name));
    await p;
  }

  private find(subject: string): MemStream | undefined {
    for (const s of this.opened.values()) if (s.stores(subject)) return s;
    return undefined;
  }

  private async streamFor(subject: string): Promise<MemStream> {
    for (const p of this.streams.values()) {
      const s = await p; // still opening its journal
      if (s.stores(subject)) return s;
    }
    throw new BusError(`no stream stores subject ${subject}`);
  }

  async publish(subject: string, data: Uint8Array | string, opts?: PublishOptions): Promise<PublishAck> {
    this.open();
    checkSubject(subject, false);
    const bytes = toBytes(data);
    const headers = checkHeaders(opts?.headers);
    if (opts?.msgId !== undefined && (typeof opts.msgId !== "string" || opts.msgId === "")) {
      throw new BusError("msgId must be a non-empty string");
    }
    if (opts?.msgId !== undefined) headers["Nats-Msg-Id"] = opts.msgId; // as JetStream shows it
    const s = this.find(subject) ?? (await this.streamFor(subject));
    return s.publish(subject, bytes, headers, opts?.msgId);
  }

  /** Stored message count and last sequence of a stream (monitoring, tests). */
  async streamInfo(name: string): Promise<{ messages: number; lastSeq: number }> {
    const p = this.streams.get(checkName("stream", name));
    if (!p) throw new BusError(`stream ${name} not found`);
    const s = await p;
    s.prune(Date.now());
    return { messages: s.msgs.size, lastSeq: s.lastSeq };
  }

  publishMany(items: PublishItem[]): Promise<PublishAck[]> {
    return Promise.all(items.map((i) => this.publish(i.subject, i.data, i.opts)));
  }

  async consume(opts: ConsumeOptions, handler: MessageHandler): Promise<Subscription> {
    this.open();
    const name = checkName("stream", opts?.stream);
    const durable = checkName("durable", opts.durable);
    const concurrency = Math.floor(checkPositive("concurrency", opts.concurrency, 1));
    checkPositive("batch", opts.batch, 1); // nothing to prefetch in-process
    const maxDeliver = opts.maxDeliver ?? 10;
    if (!Number.isInteger(maxDeliver) || (maxDeliver < 1 && maxDeliver !== -1)) throw new BusError("maxDeliver must be >= 1 or -1");
    if (opts.filterSubject !== undefined) checkSubject(opts.filterSubject, true);
    if (typeof handler !== "function") throw new BusError("handler must be a function");
    const p = this.streams.get(name);
    if (!p) throw new BusError(`stream ${name} not found`);
    const stream = await p;
    const settings = { filter: opts.filterSubject, ackWaitMs: checkPositive("ackWaitMs", opts.ackWaitMs, 30_000), maxDeliver };
    let consumer = stream.consumers.get(durable);
    if (consumer) consumer.update(settings);
    else {
      if (stream.workqueue) {
        for (const other of stream.consumers.values()) {
          if (subjectsCollide(other.filter ?? ">", opts.filterSubject ?? ">")) {
            throw new BusError(`work queue stream ${name}: consumer ${durable} overlaps consumer ${other.durable}`);
          }
        }
      }
      consumer = new MemConsumer(stream, durable, settings, stream.ackStates.get(durable));
      stream.consumers.set(durable, consumer);
    }
    const sub = new MemSub(handler, concurrency);
    const c = consumer;
    c.attach(sub);
    const handle: Subscription = {
      stop: async () => {
        this.subs.delete(handle);
        c.detach(sub);
        await Promise.allSettled([...sub.running]);
      },
    };
    this.subs.add(handle);
    return handle;
  }

  async request(subject: string, data: Uint8Array | string, opts?: RequestOptions): Promise<Uint8Array> {
    this.open();
    checkSubject(subject, false);
    const bytes = toBytes(data);
    const headers = checkHeaders(opts?.headers);
    const timeout = checkPositive("timeoutMs", opts?.timeoutMs, 5000);
    const chosen = this.pickResponders(subject);
    if (chosen.length === 0) throw new BusNoResponders(`no responders for ${subject}`);
    return new Promise<Uint8Array>((resolve, reject) => {
      let done = false;
      const timer = setTimeout(() => finish(() => reject(new BusTimeout(`request ${subject} timed out`))), timeout);
      const finish = (fn: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        fn();
      };
      for (const r of chosen) {
        const run = (async () => {
          await Promise.resolve();
          return toBytes(await r.handler(bytes.slice(), { ...headers }));
        })().then(
          (out) => finish(() => resolve(out.slice())),
          (err) => finish(() => reject(new BusError(`responder failed: ${replyError(err)}`))),
        );
        r.running.add(run);
        void run.finally(() => r.running.delete(run));
      }
    });
  }

  /** Every plain subscriber, and one member of each queue group, as NATS delivers. */
  private pickResponders(subject: string): Responder[] {
    const plain: Responder[] = [];
    const groups = new Map<string, Responder[]>();
    for (const r of this.responders) {
      if (!subjectMatches(r.pattern, subject)) continue;
      if (r.queue === undefined) plain.push(r);
      else {
        const g = groups.get(r.queue) ?? [];
        g.push(r);
        groups.set(r.queue, g);
      }
    }
    for (const [q, members] of groups) {
      let i: number;
      if (this.opts.queuePick === "round-robin") {
        const key = `${q}\u0000${subject}`;
        i = (this.rr.get(key) ?? 0) % members.length;
        this.rr.set(key, i + 1);
      } else i = Math.floor(Math.random() * members.length);
      plain.push(members[i]);
    }
    return plain;
  }

  async reply(subject: string, handler: ReplyHandler, opts?: { queue?: string }): Promise<Subscription> {
    this.open();
    checkSubject(subject, true);
    if (opts?.queue !== undefined) checkName("queue", opts.queue);
    if (typeof handler !== "function") throw new BusError("handler must be a function");
    const r: Responder = { pattern: subject, queue: opts?.queue, handler, running: new Set() };
    this.responders.add(r);
    const sub: Subscription = {
      stop: async () => {
        this.subs.delete(sub);
        this.responders.delete(r);
        await Promise.allSettled([...r.running]);
      },
    };
    this.subs.add(sub);
    return sub;
  }

  async kv(bucket: string, opts?: { history?: number }): Promise<KvBucket> {
    this.open();
    const name = checkName("bucket", bucket);
    checkPositive("history", opts?.history, 1); // only the latest value is kept in-process
    let p = this.buckets.get(name);
    if (!p) {
      p = MemKv.open(this.file(`kv_${this.prefix}_${name}.json`));
      this.buckets.set(name, p);
      p.catch(() => this.buckets.delete(name));
    }
    return p;
  }

  /** Waits until every journal record written so far is on disk (acks are written lazily). */
  async flush(): Promise<void> {
    for (const p of this.streams.values()) await (await p).journal?.flush();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.subs].map((s) => s.stop()));
    for (const p of this.streams.values()) {
      const s = await p.catch(() => null);
      if (!s) continue;
      for (const c of s.consumers.values()) c.shutdown();
      await s.journal?.close();
    }
    for (const p of this.buckets.values()) await (await p.catch(() => null))?.close();
  }
}

function replyError(err: unknown): string {
  return String((err as Error)?.message ?? err).replace(/[\r\n]+/g, " ").slice(0, 200) || "error";
}
