/**
 * A durable consumer of an embedded stream, with JetStream's explicit-ack semantics: a delivered
 * message stays pending until ack/term; ackWait expiry or nak puts it back (deliveryCount + 1)
 * until maxDeliver. Subscribers attached to the same durable share its messages round-robin,
 * each handling at most `concurrency` at once. All timers are unref'd.
 */
import type { AckState, MemStream } from "./memstream";
import type { BusMessage, MessageHandler } from "./types";
import { failureBackoffMs, jsonOf, subjectMatches } from "./util";

type Timer = ReturnType<typeof setTimeout>;

interface Pending {
  count: number; // deliveries so far
  phase: "inflight" | "ready" | "delayed";
  token: number; // identifies the current delivery
  timer?: Timer;
}

export interface ConsumerSettings {
  filter?: string;
  ackWaitMs: number;
  maxDeliver: number; // -1 unlimited
}

function unrefTimer(ms: number, fn: () => void): Timer {
  const t = setTimeout(fn, ms);
  (t as { unref?: () => void }).unref?.();
  return t;
}

export class MemSub {
  inflight = 0;
  stopped = false;
  readonly running = new Set<Promise<void>>();
  constructor(
    readonly handler: MessageHandler,
    readonly concurrency: number,
  ) {}
}

export class MemConsumer {
  filter?: string;
  private ackWaitMs = 30_000;
  private maxDeliver = 10;
  private nextSeq = 1;
  private readonly state = new Map<number, Pending>();
  private ready: number[] = []; // seqs due for redelivery, ascending
  private readonly subs: MemSub[] = [];
  private rr = 0;
  private tokens = 0;
  private dispatching = false;
  private again = false;
  private readonly done: AckState; // only kept (and journaled) for limits streams with a journal

  constructor(
    private readonly stream: MemStream,
    readonly durable: string,
    settings: ConsumerSettings,
    restored?: AckState,
  ) {
    this.update(settings);
    this.done = restored ?? { floor: 0, acked: new Set() };
  }

  update(s: ConsumerSettings): void {
    this.filter = s.filter;
    this.ackWaitMs = s.ackWaitMs;
    this.maxDeliver = s.maxDeliver;
  }

  ackState(): AckState {
    return this.done;
  }

  attach(sub: MemSub): void {
    this.subs.push(sub);
    this.dispatch();
  }

  detach(sub: MemSub): void {
    sub.stopped = true;
    const i = this.subs.indexOf(sub);
    if (i >= 0) this.subs.splice(i, 1);
  }

  /** Clears every timer (bus closing). */
  shutdown(): void {
    for (const p of this.state.values()) if (p.timer) clearTimeout(p.timer);
    this.state.clear();
    this.ready = [];
    this.subs.length = 0;
  }

  /** Hands out messages while some subscriber has room. Re-entrant calls are folded into the running one. */
  dispatch(): void {
    if (this.dispatching) {
      this.again = true;
      return;
    }
    this.dispatching = true;
    try {
      do {
        this.again = false;
        for (;;) {
          const sub = this.pickSub();
          if (!sub) break;
          const seq = this.nextReady() ?? this.nextNew();
          if (seq === undefined) break;
          this.deliver(sub, seq);
        }
      } while (this.again);
    } finally {
      this.dispatching = false;
    }
  }

  private pickSub(): MemSub | undefined {
    for (let i = 0; i < this.subs.length; i++) {
      const sub = this.subs[(this.rr + i) % this.subs.length];
      if (!sub.stopped && sub.inflight < sub.concurrency) {
        this.rr = (this.rr + i + 1) % this.subs.length;
        return sub;
      }
    }
    return undefined;
  }

  private nextReady(): number | undefined {
    while (this.ready.length > 0) {
      const seq = this.ready.shift()!;
      const p = this.state.get(seq);
      if (!p || p.phase !== "ready") continue;
      if (!this.stream.msgs.has(seq)) {
        this.state.delete(seq); // expired or removed meanwhile
        continue;
      }
      return seq;
    }
    return undefined;
  }

  private nextNew(): number | undefined {
    while (this.nextSeq <= this.stream.committedSeq) {
      const seq = this.nextSeq++;
      const m = this.stream.msgs.get(seq);
      if (!m || seq <= this.done.floor || this.done.acked.has(seq)) continue;
      if (this.filter && !subjectMatches(this.filter, m.subject)) continue;
      if (this.state.has(seq)) continue;
      return seq;
    }
    return undefined;
  }

  private deliver(sub: MemSub, seq: number): void {
    const m = this.stream.msgs.get(seq)!;
    const p = this.state.get(seq) ?? { count: 0, phase: "inflight" as const, token: 0 };
    p.count++;
    p.phase = "inflight";
    p.token = ++this.tokens;
    const token = p.token;
    p.timer = unrefTimer(this.ackWaitMs, () => this.expire(seq, token));
    this.state.set(seq, p);

    let settled = false;
    const guard = (fn: () => void) => {
      if (settled) return;
      settled = true;
      fn();
    };
    const msg: BusMessage = {
      subject: m.subject,
      data: m.data.slice(),
      headers: { ...m.headers },
      seq,
      deliveryCount: p.count,
      json: jsonOf(m.data),
      ack: () => guard(() => this.settle(seq)),
      nak: (delayMs?: number) => guard(() => this.retry(seq, token, delayMs)),
      term: () => guard(() => this.settle(seq)),
      working: () => {
        if (!settled) this.touch(seq, token);
      },
    };
    sub.inflight++;
    const run = (async () => {
      // Never inside dispatch(), and never as one endless microtask chain: a backlog of quick
      // handlers must still let timers and I/O (an HTTP server in the same process) run.
      await new Promise<void>((r) => setImmediate(r));
      try {
        await sub.handler(msg);
      } catch {
        if (!settled) msg.nak(failureBackoffMs(msg.deliveryCount));
      }
    })().finally(() => {
      sub.inflight--;
      sub.running.delete(run);
      this.dispatch();
    });
    sub.running.add(run);
  }

  /** ack or term: the message is finished for this consumer, whichever of its deliveries settles it. */
  private settle(seq: number): void {
    const p = this.state.get(seq);
    if (!p) return;
    if (p.timer) clearTimeout(p.timer);
    this.state.delete(seq);
    // A work queue drops the message on ack and on term alike (JetStream does the same).
    if (this.stream.workqueue) this.stream.remove(seq);
    else if (this.stream.journal) {
      this.done.acked.add(seq);
      this.stream.journal.note({ t: "a", c: this.durable, s: seq });
    }
  }

  private retry(seq: number, token: number, delayMs?: number): void {
    const p = this.state.get(seq);
    if (!p || p.token !== token || p.phase !== "inflight") return;
    if (p.timer) clearTimeout(p.timer);
    this.requeue(seq, p, delayMs && delayMs > 0 ? delayMs : 0);
  }

  private expire(seq: number, token: number): void {
    const p = this.state.get(seq);
    if (!p || p.token !== token || p.phase !== "inflight") return;
    this.requeue(seq, p, 0);
  }

  private touch(seq: number, token: number): void {
    const p = this.state.get(seq);
    if (!p || p.token !== token || p.phase !== "inflight") return;
    if (p.timer) clearTimeout(p.timer);
    p.timer = unrefTimer(this.ackWaitMs, () => this.expire(seq, token));
  }

  private requeue(seq: number, p: Pending, delayMs: number): void {
    p.timer = undefined;
    if (this.maxDeliver !== -1 && p.count >= this.maxDeliver) {
      // Out of attempts: JetStream stops delivering it but keeps it stored (no ack).
      this.state.delete(seq);
      if (!this.stream.workqueue && this.stream.journal) {
        this.done.acked.add(seq);
        this.stream.journal.note({ t: "a", c: this.durable, s: seq });
      }
      return;
    }
    // Even an immediate redelivery waits for the next turn of the event loop: a handler that
    // always naks must not starve timers and I/O with a microtask loop.
    p.phase = "delayed";
    p.timer = unrefTimer(delayMs, () => {
      p.timer = undefined;
      this.makeReady(seq, p);
    });
  }

  private makeReady(seq: number, p: Pending): void {
    p.phase = "ready";
    // Redeliveries go out oldest first, as JetStream does.
    let lo = 0;
    let hi = this.ready.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.ready[mid] < seq) lo = mid + 1;
      else hi = mid;
    }
    this.ready.splice(lo, 0, seq);
    this.dispatch();
  }
}
