/**
 * Pipelined JetStream publishing for NatsBus. Not js.publish(): its per-request timer and reply
 * muxing cap a burst of concurrent publishes at ~20k msg/s on this machine. Here every publish
 * is a plain PUB with reply `${inbox}.${id}`, all PubAcks arrive on one subscription, and one
 * unref'd sweeper enforces the deadlines (they grow with insertion order, so it only looks at
 * the front of the map).
 */
import type { Msg } from "@nats-io/transport-node";
import { BusError, BusTimeout, type PublishAck } from "./types";

interface Pending {
  resolve(a: PublishAck): void;
  reject(e: Error): void;
  deadline: number;
  subject: string; // logical, for messages
}

const decoder = new TextDecoder();

export class PubAcks {
  private readonly pending = new Map<string, Pending>();
  private seq = 0;
  private sweeper: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly timeoutMs: number,
    /** Server stream name → the name the caller knows. */
    private readonly logicalStream: (name: string) => string,
  ) {}

  /** Registers a publish; `send` gets the id for the reply subject and must PUB (or throw). */
  track(subject: string, send: (id: string) => void): Promise<PublishAck> {
    return new Promise<PublishAck>((resolve, reject) => {
      const id = (++this.seq).toString(36);
      this.pending.set(id, { resolve, reject, deadline: Date.now() + this.timeoutMs, subject });
      try {
        send(id);
      } catch (err) {
        this.pending.delete(id);
        reject(err);
        return;
      }
      this.startSweeper();
    });
  }

  onAck(id: string, m: Msg): void {
    const p = this.pending.get(id);
    if (!p) return; // late answer after a timeout or a disconnect
    this.pending.delete(id);
    if (m.headers?.code === 503) {
      p.reject(new BusError(`no stream stores subject ${p.subject}`));
      return;
    }
    try {
      const r = JSON.parse(decoder.decode(m.data)) as {
        stream?: string;
        seq?: number;
        duplicate?: boolean;
        error?: { description?: string };
      };
      if (r.error || typeof r.stream !== "string" || typeof r.seq !== "number") {
        p.reject(new BusError(`publish to ${p.subject} refused: ${r.error?.description ?? "invalid ack"}`));
      } else p.resolve({ stream: this.logicalStream(r.stream), seq: r.seq, duplicate: r.duplicate === true });
    } catch {
      p.reject(new BusError(`publish to ${p.subject}: unreadable ack`));
    }
  }

  /** Rejects every publish still waiting (connection lost, bus closed). */
  failAll(err: Error): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(err);
  }

  private startSweeper(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [id, p] of this.pending) {
        if (p.deadline > now) break;
        this.pending.delete(id);
        p.reject(new BusTimeout(`publish to ${p.subject}: no ack within ${this.timeoutMs} ms`));
      }
      if (this.pending.size === 0) {
        clearInterval(this.sweeper!);
        this.sweeper = null;
      }
    }, 100);
    (this.sweeper as { unref?: () => void }).unref?.();
  }
}
