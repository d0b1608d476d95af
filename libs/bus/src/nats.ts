/**
 * NatsBus: the Bus over NATS JetStream (production). Streams, consumers and KV buckets live on the
 * server under the bus prefix; this object only holds the connection.
 *
 * Availability: the first connection is retried in the background forever (so a process can start
 * before NATS), and once connected the client reconnects forever by itself. While there is no
 * connection, every operation rejects at once with BusUnavailable instead of queueing; operations
 * in flight when the connection drops are rejected at the disconnect event.
 */
import { connect, createInbox, headers as natsHeaders, errors, RequestError } from "@nats-io/transport-node";
import type { Msg, MsgHdrs, NatsConnection, Subscription as NatsSub } from "@nats-io/transport-node";
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  jetstream,
  jetstreamManager,
} from "@nats-io/jetstream";
import type { JetStreamClient, JetStreamManager, JsMsg } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { NatsKv } from "./natskv";
import { PubAcks } from "./natspub";
import {
  BusError,
  BusNoResponders,
  BusTimeout,
  BusUnavailable,
  type Bus,
  type BusMessage,
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
  Gate,
  REPLY_ERROR_HEADER,
  checkHeaders,
  checkName,
  checkPositive,
  checkSubject,
  duplicateWindow,
  failureBackoffMs,
  jsonOf,
  sleep,
  toBytes,
} from "./util";

export interface NatsBusOptions {
  /** e.g. "nats://127.0.0.1:4222"; several servers comma-separated. */
  url: string;
  /** Namespace for streams, subjects and buckets. Default "ps". */
  prefix?: string;
  /** Connection name shown by the server (monitoring). */
  name?: string;
  /** How long createNatsBus() waits for the first connection before returning a bus still connecting. Default 2000. */
  connectWaitMs?: number;
  /** PubAck / JetStream API timeout. Default 5000. */
  timeoutMs?: number;
}

const ms2ns = (ms: number) => Math.round(ms * 1_000_000);

export async function createNatsBus(opts: NatsBusOptions): Promise<NatsBus> {
  const bus = new NatsBus(opts);
  await bus.ready(checkPositive("connectWaitMs", opts.connectWaitMs, 2000));
  return bus;
}

interface Conn {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** Where PubAcks arrive: `${inbox}.${publish id}`. */
  inbox: string;
}


export class NatsBus implements Bus {
  readonly kind = "nats" as const;
  readonly prefix: string;
  private conn: Conn | null = null;
  private connected = false;
  private closed = false;
  private readonly firstConnect: Promise<void>;
  private readonly timeoutMs: number;
  /** Rejecters of operations in flight, failed together when the connection drops. */
  private readonly inFlight = new Set<(e: Error) => void>();
  private readonly subs = new Set<Subscription>();
  private readonly buckets = new Map<string, Promise<KvBucket>>();
  private readonly pubs: PubAcks;

  constructor(private readonly opts: NatsBusOptions) {
    if (typeof opts?.url !== "string" || opts.url === "") throw new BusError("NATS url is required");
    this.prefix = checkName("prefix", opts.prefix ?? "ps");
    this.timeoutMs = checkPositive("timeoutMs", opts.timeoutMs, 5000);
    this.pubs = new PubAcks(this.timeoutMs, (n) => this.unprefixStream(n));
    this.firstConnect = this.connectLoop();
  }

  /** Waits up to `ms` for the first connection; the bus stays usable (and connecting) after that. */
  async ready(ms: number): Promise<void> {
    await Promise.race([this.firstConnect, sleep(ms)]);
  }

  isConnected(): boolean {
    return this.connected && !!this.conn && !this.conn.nc.isClosed();
  }

  private async connectLoop(): Promise<void> {
    while (!this.closed) {
      let nc: NatsConnection | null = null;
      try {
        nc = await connect({
          servers: this.opts.url.split(","),
          name: this.opts.name,
          maxReconnectAttempts: -1, // once connected, never give up
          reconnectTimeWait: 500,
          timeout: 2000,
          pingInterval: 10_000, // notice a silently dead server within ~30 s
          maxPingOut: 3,
        });
        if (this.closed) {
          await nc.close();
          return;
        }
        const js = jetstream(nc, { timeout: this.timeoutMs });
        const jsm = await jetstreamManager(nc, { timeout: this.timeoutMs, checkAPI: false });
        const inbox = createInbox();
        nc.subscribe(`${inbox}.*`, {
          callback: (err, m) => {
            if (!err) this.pubs.onAck(m.subject.slice(inbox.length + 1), m);
          },
        });
        this.conn = { nc, js, jsm, inbox };
        this.connected = true;
        void this.watchStatus(nc);
        return;
      } catch {
        await nc?.close().catch(() => {});
        await sleep(500); // not reachable yet: try again, until close()
      }
    }
  }

  private async watchStatus(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === "disconnect" || s.type === "close") {
        this.connected = false;
        const err = new BusUnavailable("connection to NATS lost");
        for (const reject of this.inFlight) reject(err);
        this.inFlight.clear();
        this.pubs.failAll(err);
      } else if (s.type === "reconnect") {
        this.connected = true;
      }
    }
    this.connected = false;
  }

  private live(): Conn {
    if (this.closed) throw new BusUnavailable("bus is closed");
    if (!this.conn || !this.isConnected()) throw new BusUnavailable("NATS is not connected");
    return this.conn;
  }

  /** Runs a server call so that it fails with a BusError, and at once if the connection drops. */
  private guard<T>(fn: (c: Conn) => Promise<T>): Promise<T> {
    let c: Conn;
    try {
      c = this.live();
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<T>((resolve, reject) => {
      const fail = (e: Error) => reject(e);
      this.inFlight.add(fail);
      fn(c).then(
        (v) => {
          this.inFlight.delete(fail);
          resolve(v);
        },
        (e) => {
          this.inFlight.delete(fail);
          reject(toBusError(e));
        },
      );
    });
  }

  streamName(name: string): string {
    return `${this.prefix}_${checkName("stream", name)}`;
  }
  private subj(subject: string, wildcards = false): string {
    return `${this.prefix}.${checkSubject(subject, wildcards)}`;
  }
  private unprefix(subject: string): string {
    return subject.startsWith(this.prefix + ".") ? subject.slice(this.prefix.length + 1) : subject;
  }

  async ensureStream(cfg: StreamConfig): Promise<void> {
    const name = this.streamName(cfg.name);
    if (!Array.isArray(cfg.subjects) || cfg.subjects.length === 0) throw new BusError("stream needs subjects");
    const conf = {
      name,
      subjects: cfg.subjects.map((s) => this.subj(s, true)),
      retention: (cfg.retention ?? "workqueue") === "workqueue" ? RetentionPolicy.Workqueue : RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      num_replicas: 1,
      duplicate_window: ms2ns(duplicateWindow(cfg)),
      max_age: cfg.maxAgeMs === undefined ? 0 : ms2ns(checkPositive("maxAgeMs", cfg.maxAgeMs, 0)),
    };
    await this.guard(async ({ jsm }) => {
      try {
        await jsm.streams.add(conf);
      } catch (err) {
        // Exists with another configuration (another release, or a concurrent creator): update it.
        if (err instanceof JetStreamApiError && err.code === 10058) await jsm.streams.update(name, conf);
        else throw err;
      }
    });
  }

  publish(subject: string, data: Uint8Array | string, opts?: PublishOptions): Promise<PublishAck> {
    let subj: string;
    let payload: Uint8Array;
    let hdrs: MsgHdrs | undefined;
    let c: Conn;
    try {
      subj = this.subj(subject);
      payload = toBytes(data);
      const h = checkHeaders(opts?.headers);
      if (opts?.msgId !== undefined) {
        if (typeof opts.msgId !== "string" || opts.msgId === "") throw new BusError("msgId must be a non-empty string");
        h["Nats-Msg-Id"] = opts.msgId;
      }
      hdrs = toNatsHeaders(h);
      c = this.live();
    } catch (err) {
      return Promise.reject(err);
    }
    // No await before the PUB: concurrent publishes are pipelined on the socket (see natspub.ts).
    return this.pubs.track(subject, (id) => {
      try {
        c.nc.publish(subj, payload, { reply: `${c.inbox}.${id}`, headers: hdrs });
      } catch (err) {
        throw toBusError(err); // e.g. payload over max_payload
      }
    });
  }

  /** Stored message count and last sequence of a stream (monitoring, tests). */
  streamInfo(name: string): Promise<{ messages: number; lastSeq: number }> {
    let stream: string;
    try {
      stream = this.streamName(name);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.guard(async ({ jsm }) => {
      const si = await jsm.streams.info(stream);
      return { messages: si.state.messages, lastSeq: si.state.last_seq };
    });
  }

  /** Publishes all at once (pipelined); resolves in input order, rejects on the first failure. */
  publishMany(items: PublishItem[]): Promise<PublishAck[]> {
    return Promise.all(items.map((i) => this.publish(i.subject, i.data, i.opts)));
  }

  private unprefixStream(name: string): string {
    return name.startsWith(this.prefix + "_") ? name.slice(this.prefix.length + 1) : name;
  }

  async consume(opts: ConsumeOptions, handler: MessageHandler): Promise<Subscription> {
    const stream = this.streamName(opts.stream);
    const durable = checkName("durable", opts.durable);
    const concurrency = Math.floor(checkPositive("concurrency", opts.concurrency, 1));
    const batch = Math.floor(checkPositive("batch", opts.batch, Math.max(concurrency, 64)));
    const maxDeliver = opts.maxDeliver ?? 10;
    if (!Number.isInteger(maxDeliver) || (maxDeliver < 1 && maxDeliver !== -1)) throw new BusError("maxDeliver must be >= 1 or -1");
    if (typeof handler !== "function") throw new BusError("handler must be a function");
    const config = {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: ms2ns(checkPositive("ackWaitMs", opts.ackWaitMs, 30_000)),
      max_deliver: maxDeliver,
      filter_subject: opts.filterSubject === undefined ? undefined : this.subj(opts.filterSubject, true),
      max_ack_pending: -1,
    };
    const messages = await this.guard(async ({ js, jsm }) => {
      try {
        await jsm.consumers.add(stream, config);
      } catch (err) {
        // Same durable, other settings (a new release rolling out): take the new settings.
        if (err instanceof JetStreamApiError && (err.code === 10148 || err.code === 10013 || err.code === 10105)) {
          await jsm.consumers.update(stream, durable, config);
        } else throw err;
      }
      const consumer = await js.consumers.get(stream, durable);
      return consumer.consume({ max_messages: batch });
    });

    const gate = new Gate(concurrency);
    const running = new Set<Promise<void>>();
    let stopping = false;
    const loop = (async () => {
      for await (const m of messages) {
        await gate.acquire();
        if (stopping) {
          // Taken from the server but never started: hand it back now rather than after ackWait.
          m.nak();
          gate.release();
          continue;
        }
        const p = this.handle(m, handler).finally(() => {
          running.delete(p);
          gate.release();
        });
        running.add(p);
      }
    })().catch(() => {});
    const sub: Subscription = {
      stop: async () => {
        if (stopping) return;
        stopping = true;
        this.subs.delete(sub);
        await messages.close().catch(() => {});
        await loop;
        await Promise.allSettled([...running]);
      },
    };
    this.subs.add(sub);
    return sub;
  }

  private async handle(m: JsMsg, handler: MessageHandler): Promise<void> {
    let settled = false;
    const once = (fn: () => void) => () => {
      if (settled) return;
      settled = true;
      try {
        fn();
      } catch {
        // Connection gone: the server redelivers after ackWait.
      }
    };
    const deliveryCount = m.info.deliveryCount;
    const msg: BusMessage = {
      subject: this.unprefix(m.subject),
      data: m.data,
      headers: fromNatsHeaders(m.headers),
      seq: m.seq,
      deliveryCount,
      json: jsonOf(m.data),
      ack: once(() => m.ack()),
      nak: (delayMs?: number) => once(() => m.nak(delayMs && delayMs > 0 ? delayMs : undefined))(),
      term: once(() => m.term()),
      working: () => {
        if (!settled) m.working();
      },
    };
    try {
      await handler(msg);
    } catch {
      if (!settled) msg.nak(failureBackoffMs(deliveryCount));
    }
  }

  request(subject: string, data: Uint8Array | string, opts?: RequestOptions): Promise<Uint8Array> {
    let subj: string;
    let payload: Uint8Array;
    let hdrs: MsgHdrs | undefined;
    let timeout: number;
    try {
      subj = this.subj(subject);
      payload = toBytes(data);
      hdrs = toNatsHeaders(checkHeaders(opts?.headers));
      timeout = checkPositive("timeoutMs", opts?.timeoutMs, 5000);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.guard(async ({ nc }) => {
      const r = await nc.request(subj, payload, { timeout, headers: hdrs });
      const failed = r.headers?.get(REPLY_ERROR_HEADER);
      if (failed) throw new BusError(`responder failed: ${failed}`);
      return r.data;
    });
  }

  async reply(subject: string, handler: ReplyHandler, opts?: { queue?: string }): Promise<Subscription> {
    const subj = this.subj(subject, true);
    if (opts?.queue !== undefined) checkName("queue", opts.queue);
    if (typeof handler !== "function") throw new BusError("handler must be a function");
    const running = new Set<Promise<void>>();
    const respond = async (m: Msg) => {
      try {
        const out = await handler(m.data, fromNatsHeaders(m.headers));
        m.respond(toBytes(out));
      } catch (err) {
        const h = natsHeaders();
        h.set(REPLY_ERROR_HEADER, String((err as Error)?.message ?? err).replace(/[\r\n]+/g, " ").slice(0, 200) || "error");
        try {
          m.respond(new Uint8Array(0), { headers: h });
        } catch {
          // connection gone; the requester times out
        }
      }
    };
    const ns: NatsSub = this.live().nc.subscribe(subj, {
      queue: opts?.queue,
      callback: (err, m) => {
        if (err || !m.reply) return;
        const p = respond(m).finally(() => running.delete(p));
        running.add(p);
      },
    });
    const sub: Subscription = {
      stop: async () => {
        this.subs.delete(sub);
        ns.unsubscribe();
        await Promise.allSettled([...running]);
      },
    };
    this.subs.add(sub);
    return sub;
  }

  kv(bucket: string, opts?: { history?: number }): Promise<KvBucket> {
    let name: string;
    let history: number;
    try {
      name = `${this.prefix}_${checkName("bucket", bucket)}`;
      history = Math.floor(checkPositive("history", opts?.history, 1));
    } catch (err) {
      return Promise.reject(err);
    }
    let p = this.buckets.get(name);
    if (!p) {
      p = this.guard(({ js }) => new Kvm(js).create(name, { history })).then((kv) => new NatsKv(kv, (fn) => this.guard(fn)));
      this.buckets.set(name, p);
      p.catch(() => this.buckets.delete(name));
    }
    return p;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.allSettled([...this.subs].map((s) => s.stop()));
    this.closed = true;
    const c = this.conn;
    if (c) {
      // drain() flushes acks and replies still buffered and lets PubAcks in flight arrive;
      // bounded, since it cannot finish while disconnected.
      await Promise.race([c.nc.drain().catch(() => {}), sleep(2000)]);
      if (!c.nc.isClosed()) await c.nc.close().catch(() => {});
    }
    this.conn = null;
    this.connected = false;
    this.pubs.failAll(new BusUnavailable("bus is closed"));
  }
}

function toNatsHeaders(h: Record<string, string>): MsgHdrs | undefined {
  const keys = Object.keys(h);
  if (keys.length === 0) return undefined;
  const out = natsHeaders();
  for (const k of keys) out.set(k, h[k]);
  return out;
}

function fromNatsHeaders(h: MsgHdrs | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  for (const k of h.keys()) out[k] = h.get(k);
  return out;
}

/** Maps client errors to the bus error classes (the cause is kept). */
export function toBusError(err: unknown): BusError {
  if (err instanceof BusError) return err;
  const opts = { cause: err };
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if (e instanceof errors.NoRespondersError || (e instanceof RequestError && e.isNoResponders())) {
      return new BusNoResponders("no responders", opts);
    }
    if (e instanceof errors.TimeoutError) return new BusTimeout("timed out", opts);
    if (
      e instanceof errors.ClosedConnectionError ||
      e instanceof errors.ConnectionError ||
      e instanceof errors.DrainingConnectionError
    ) {
      return new BusUnavailable("NATS connection unavailable", opts);
    }
  }
  return new BusError(err instanceof Error ? err.message : String(err), opts);
}
