/**
 * The message bus the apps talk through. Two implementations keep the same semantics:
 * `NatsBus` (NATS JetStream, production) and `MemoryBus` (in-process, embedded mode and tests).
 *
 * Semantics the code relies on (and the contract suite in `bus.contract.test.ts` checks on both):
 * - publish() resolves only once the stream has stored the message (JetStream PubAck);
 *   a second publish with the same `msgId` inside the stream's duplicate window is not stored
 *   again and resolves with `duplicate: true`.
 * - consume() delivers to a durable consumer with explicit ack: a message that is not acked within
 *   `ackWaitMs`, or that is nak()ed, is delivered again (deliveryCount + 1) until `maxDeliver`.
 *   Several consumers with the same durable name share the work (each message to one of them).
 * - request()/reply(): request-reply with queue groups, so several replicas can answer; a request
 *   with no responder rejects with BusNoResponders, one without an answer in time with BusTimeout.
 * - kv(): a key-value bucket with revisions and a watch() that first replays current values.
 *
 * Subjects and stream names are prefixed by the bus itself (`prefix` option) so that tests and
 * several deployments can share one NATS server without seeing each other.
 */

export interface StreamConfig {
  /** Logical name, e.g. "INGEST"; the bus prefixes it. */
  name: string;
  /** Logical subjects, e.g. ["ingest.>"]; the bus prefixes them. */
  subjects: string[];
  /** De-duplication window for msgId, ms. Default 2 minutes. */
  duplicateWindowMs?: number;
  /** Messages older than this are dropped, ms. Default: keep (limits policy). */
  maxAgeMs?: number;
  /** "limits" keeps messages after ack (replayable); "workqueue" removes them once acked. Default "workqueue". */
  retention?: "limits" | "workqueue";
}

export interface PublishOptions {
  /** De-duplication id (Nats-Msg-Id). */
  msgId?: string;
  headers?: Record<string, string>;
}

/** One message of publishMany(). (Added.) */
export interface PublishItem {
  subject: string;
  data: Uint8Array | string;
  opts?: PublishOptions;
}

export interface PublishAck {
  stream: string;
  seq: number;
  duplicate: boolean;
}

export interface BusMessage {
  subject: string; // logical subject, prefix removed
  data: Uint8Array;
  headers: Record<string, string>;
  /** Stream sequence. */
  seq: number;
  /** 1 on first delivery. */
  deliveryCount: number;
  json<T = unknown>(): T;
  ack(): void;
  /** Redeliver, after delayMs when given. */
  nak(delayMs?: number): void;
  /** Never redeliver. */
  term(): void;
  /** Extend the ack deadline for long work. */
  working(): void;
}

export interface ConsumeOptions {
  stream: string; // logical stream name
  durable: string;
  filterSubject?: string; // logical
  ackWaitMs?: number; // default 30 s
  maxDeliver?: number; // default 10; -1 = unlimited
  /** Messages handled at once by this process. Default 1. */
  concurrency?: number;
  /** Messages fetched per pull. Default max(concurrency, 64). */
  batch?: number;
}

/**
 * The handler must ack/nak/term each message itself. If it throws without having settled the
 * message, the bus naks it (redelivery with a backoff).
 */
export type MessageHandler = (msg: BusMessage) => Promise<void> | void;

export interface Subscription {
  /** Stop taking new messages; resolves when in-flight handlers are done. */
  stop(): Promise<void>;
}

export interface KvEntry {
  key: string;
  value: Uint8Array;
  revision: number;
  operation: "PUT" | "DEL";
  json<T = unknown>(): T;
}

export interface KvBucket {
  get(key: string): Promise<KvEntry | null>;
  put(key: string, value: Uint8Array | string): Promise<number>;
  delete(key: string): Promise<void>;
  keys(): Promise<string[]>;
  /** Replays current values (operation PUT), then live changes, until stop(). */
  watch(onEntry: (e: KvEntry) => void): Promise<Subscription>;
}

export interface RequestOptions {
  timeoutMs?: number; // default 5 s
  /** Passed to the reply handler. (Added: the handler receives headers, so a requester can send some.) */
  headers?: Record<string, string>;
}

export type ReplyHandler = (data: Uint8Array, headers: Record<string, string>) => Promise<Uint8Array | string> | Uint8Array | string;

export interface Bus {
  readonly kind: "memory" | "nats";
  ensureStream(cfg: StreamConfig): Promise<void>;
  publish(subject: string, data: Uint8Array | string, opts?: PublishOptions): Promise<PublishAck>;
  /**
   * (Added.) Publishes all items at once, pipelined (one fsync / one socket flush for many);
   * resolves with the acks in input order, rejects on the first failure. Both implementations have it.
   */
  publishMany?(items: PublishItem[]): Promise<PublishAck[]>;
  consume(opts: ConsumeOptions, handler: MessageHandler): Promise<Subscription>;
  request(subject: string, data: Uint8Array | string, opts?: RequestOptions): Promise<Uint8Array>;
  /** Answer requests on subject; replicas with the same queue share the load. */
  reply(subject: string, handler: ReplyHandler, opts?: { queue?: string }): Promise<Subscription>;
  kv(bucket: string, opts?: { history?: number }): Promise<KvBucket>;
  /** True while the connection to the server is up (always true for memory). */
  isConnected(): boolean;
  close(): Promise<void>;
}

export class BusError extends Error {
  override name = "BusError";
}
export class BusTimeout extends BusError {
  override name = "BusTimeout";
}
export class BusNoResponders extends BusError {
  override name = "BusNoResponders";
}
export class BusUnavailable extends BusError {
  override name = "BusUnavailable";
}
