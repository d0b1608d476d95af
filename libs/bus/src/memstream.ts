/**
 * One embedded stream: messages by sequence, the msgId duplicate window, retention, and the
 * optional journal that makes it survive a restart. Consumers live in memconsumer.ts.
 */
import { Journal, type JournalOwner, type JournalRecord } from "./journal";
import { MemConsumer } from "./memconsumer";
import { BusError, type PublishAck, type StreamConfig } from "./types";
import { duplicateWindow, subjectMatches } from "./util";

export interface StoredMsg {
  seq: number;
  subject: string; // logical
  data: Uint8Array;
  headers: Record<string, string>;
  msgId?: string;
  ts: number;
}

/** Consumer state read back from the journal (limits retention): seqs at or below floor, and those in acked, are done. */
export interface AckState {
  floor: number;
  acked: Set<number>;
}

export class MemStream implements JournalOwner {
  readonly msgs = new Map<number, StoredMsg>(); // insertion order = seq order
  lastSeq = 0;
  /** Highest seq whose journal write is durable; consumers see nothing beyond it. */
  committedSeq = 0;
  readonly consumers = new Map<string, MemConsumer>();
  readonly ackStates = new Map<string, AckState>();
  private readonly dedup = new Map<string, { seq: number; ts: number }>(); // insertion order = time order
  private bytes = 0;
  cfg!: Required<Omit<StreamConfig, "maxAgeMs">> & { maxAgeMs?: number };

  constructor(
    readonly name: string,
    cfg: StreamConfig,
    readonly journal: Journal | null,
  ) {
    this.configure(cfg);
    if (journal) journal.owner = this;
  }

  configure(cfg: StreamConfig): void {
    const retention = cfg.retention ?? "workqueue";
    if (this.cfg && this.cfg.retention !== retention) throw new BusError(`stream ${cfg.name}: retention cannot change`);
    this.cfg = {
      name: cfg.name,
      subjects: [...cfg.subjects],
      duplicateWindowMs: duplicateWindow(cfg),
      maxAgeMs: cfg.maxAgeMs,
      retention,
    };
  }

  get workqueue(): boolean {
    return this.cfg.retention === "workqueue";
  }

  stores(subject: string): boolean {
    return this.cfg.subjects.some((p) => subjectMatches(p, subject));
  }

  async publish(subject: string, data: Uint8Array, headers: Record<string, string>, msgId?: string): Promise<PublishAck> {
    const now = Date.now();
    this.prune(now);
    if (msgId !== undefined) {
      const seen = this.dedup.get(msgId);
      if (seen) {
        // The original may still be on its way to disk: answer once it is.
        if (this.journal && seen.seq > this.committedSeq) await this.journal.flush();
        return { stream: this.cfg.name, seq: seen.seq, duplicate: true };
      }
    }
    const seq = ++this.lastSeq;
    const msg: StoredMsg = { seq, subject, data: data.slice(), headers, msgId, ts: now };
    this.msgs.set(seq, msg);
    this.bytes += data.length + 100;
    if (msgId !== undefined) this.dedup.set(msgId, { seq, ts: now });
    if (this.journal) {
      try {
        await this.journal.write(msgRecord(msg));
      } catch (err) {
        // Not stored after all: forget it so that a retry with the same msgId is accepted.
        this.remove(seq, false);
        if (msgId !== undefined && this.dedup.get(msgId)?.seq === seq) this.dedup.delete(msgId);
        throw err;
      }
    }
    if (seq > this.committedSeq) this.committedSeq = seq;
    for (const c of this.consumers.values()) c.dispatch();
    return { stream: this.cfg.name, seq, duplicate: false };
  }

  /** Drops a message (work queue ack, expiry); `log` records it in the journal. */
  remove(seq: number, log = true): void {
    const m = this.msgs.get(seq);
    if (!m) return;
    this.msgs.delete(seq);
    this.bytes -= m.data.length + 100;
    if (log) this.journal?.note({ t: "x", s: seq });
  }

  /** Drops messages older than maxAge and msgIds older than the duplicate window. */
  prune(now: number): void {
    if (this.cfg.maxAgeMs !== undefined) {
      const limit = now - this.cfg.maxAgeMs;
      for (const m of this.msgs.values()) {
        if (m.ts >= limit) break;
        this.remove(m.seq, false); // the journal replay drops it again by its timestamp
      }
    }
    const idLimit = now - this.cfg.duplicateWindowMs;
    for (const [id, e] of this.dedup) {
      if (e.ts >= idLimit) break;
      this.dedup.delete(id);
    }
  }

  /** Replays journal records read at open. */
  load(records: JournalRecord[]): void {
    const ack = (c: string) => {
      let s = this.ackStates.get(c);
      if (!s) this.ackStates.set(c, (s = { floor: 0, acked: new Set() }));
      return s;
    };
    for (const r of records) {
      if (r.t === "m") {
        const data = Buffer.from(r.d, "base64");
        const m: StoredMsg = { seq: r.s, subject: r.j, data: new Uint8Array(data), headers: r.h ?? {}, msgId: r.i, ts: r.ts };
        this.msgs.set(r.s, m);
        this.bytes += data.length + 100;
        if (r.i !== undefined) this.dedup.set(r.i, { seq: r.s, ts: r.ts });
        this.lastSeq = Math.max(this.lastSeq, r.s);
      } else if (r.t === "x") this.remove(r.s, false);
      else if (r.t === "a") ack(r.c).acked.add(r.s);
      else if (r.t === "f") ack(r.c).floor = Math.max(ack(r.c).floor, r.s);
      else if (r.t === "i") this.dedup.set(r.i, { seq: r.s, ts: r.ts });
      else if (r.t === "n") this.lastSeq = Math.max(this.lastSeq, r.s);
    }
    // Records of one group can interleave with others' removal notes: keep maps in seq/time order.
    const sorted = [...this.msgs.values()].sort((a, b) => a.seq - b.seq);
    this.msgs.clear();
    for (const m of sorted) this.msgs.set(m.seq, m);
    const ids = [...this.dedup].sort((a, b) => a[1].ts - b[1].ts);
    this.dedup.clear();
    for (const [k, v] of ids) this.dedup.set(k, v);
    this.committedSeq = this.lastSeq;
    this.prune(Date.now());
  }

  liveBytes(): number {
    return Math.max(0, this.bytes) * 1.4 + 4096;
  }

  snapshot(): JournalRecord[] {
    const now = Date.now();
    this.prune(now);
    const out: JournalRecord[] = [{ t: "n", s: this.lastSeq }];
    for (const [i, e] of this.dedup) {
      if (!this.msgs.has(e.seq)) out.push({ t: "i", i, s: e.seq, ts: e.ts });
    }
    for (const m of this.msgs.values()) out.push(msgRecord(m));
    if (!this.workqueue) {
      const names = new Set([...this.ackStates.keys(), ...this.consumers.keys()]);
      for (const name of names) {
        const st = this.consumers.get(name)?.ackState() ?? this.ackStates.get(name)!;
        const floor = this.ackFloor(st, this.consumers.get(name)?.filter);
        // Fold the acks below the floor into it, in memory too, so the set stays small.
        st.floor = floor;
        for (const s of st.acked) if (s <= floor || !this.msgs.has(s)) st.acked.delete(s);
        out.push({ t: "f", c: name, s: floor });
        for (const s of st.acked) out.push({ t: "a", c: name, s });
      }
    }
    return out;
  }

  /** Highest seq such that every stored message up to it is done for the consumer. */
  private ackFloor(st: AckState, filter?: string): number {
    for (const m of this.msgs.values()) {
      if (m.seq <= st.floor || st.acked.has(m.seq)) continue;
      if (filter && !subjectMatches(filter, m.subject)) continue;
      return m.seq - 1;
    }
    return this.lastSeq;
  }
}

function msgRecord(m: StoredMsg): JournalRecord {
  const r: JournalRecord = { t: "m", s: m.seq, j: m.subject, d: Buffer.from(m.data).toString("base64"), ts: m.ts };
  if (Object.keys(m.headers).length > 0) r.h = m.headers;
  if (m.msgId !== undefined) r.i = m.msgId;
  return r;
}
