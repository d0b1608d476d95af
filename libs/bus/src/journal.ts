/**
 * Append-only journal of one embedded stream (MemoryBus with dataDir): one JSON record per line.
 *
 * Group commit: records written in the same tick, or while a write+fsync is under way, go out
 * together in the next single write+fsync, so many concurrent publishes cost one fsync. A
 * durable write() resolves only after its fsync; a lazy one (acks) rides along with the next.
 *
 * When the file grows well beyond what is still live, it is rewritten from a snapshot of the
 * state (tmp file, fsync, rename, fsync of the directory), so it stays proportional to the backlog.
 * A torn last line (crash in mid-write) is dropped on open.
 */
import { mkdir, open, readFile, rename, truncate } from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { BusError, BusUnavailable } from "./types";

/** m: message, x: message removed, a: acked by a consumer, f: consumer ack floor, i: dedup id, n: last seq. */
export type JournalRecord =
  | { t: "m"; s: number; j: string; d: string; h?: Record<string, string>; i?: string; ts: number }
  | { t: "x"; s: number }
  | { t: "a"; c: string; s: number }
  | { t: "f"; c: string; s: number }
  | { t: "i"; i: string; s: number; ts: number }
  | { t: "n"; s: number };

export interface JournalOwner {
  /** The whole live state as records, for compaction. */
  snapshot(): JournalRecord[];
  /** Rough size in bytes of what the snapshot would write. */
  liveBytes(): number;
}

interface Waiter {
  resolve(): void;
  reject(e: Error): void;
}

export class Journal {
  private lines: string[] = [];
  private waiters: Waiter[] = [];
  private running: Promise<void> | null = null;
  private closed = false;
  private compactAt: number;
  owner: JournalOwner | null = null;

  private constructor(
    private readonly path: string,
    private fh: FileHandle,
    private size: number,
    private readonly minCompactBytes: number,
  ) {
    this.compactAt = minCompactBytes;
  }

  static async open(path: string, minCompactBytes = 4 << 20): Promise<{ journal: Journal; records: JournalRecord[] }> {
    try {
      return await Journal.openFile(path, minCompactBytes);
    } catch (err) {
      throw err instanceof BusError ? err : new BusError(`cannot open journal ${path}`, { cause: err });
    }
  }

  private static async openFile(path: string, minCompactBytes: number): Promise<{ journal: Journal; records: JournalRecord[] }> {
    await mkdir(dirname(path), { recursive: true });
    let text = "";
    try {
      text = await readFile(path, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw new BusError(`cannot read journal ${path}`, { cause: err });
    }
    const records: JournalRecord[] = [];
    let good = 0;
    while (good < text.length) {
      const nl = text.indexOf("\n", good);
      if (nl < 0) break; // torn tail
      try {
        records.push(JSON.parse(text.slice(good, nl)) as JournalRecord);
      } catch {
        break;
      }
      good = nl + 1;
    }
    const bytes = Buffer.byteLength(text.slice(0, good));
    if (good < text.length) await truncate(path, bytes);
    const fh = await open(path, "a");
    if (text === "") await syncDir(dirname(path)); // make a new file's name durable too
    return { journal: new Journal(path, fh, bytes, minCompactBytes), records };
  }

  /** Durable: resolves once the record is on disk. */
  write(rec: JournalRecord): Promise<void> {
    if (this.closed) return Promise.reject(new BusUnavailable("bus is closed"));
    return new Promise<void>((resolve, reject) => {
      this.lines.push(JSON.stringify(rec) + "\n");
      this.waiters.push({ resolve, reject });
      this.kick();
    });
  }

  /** Lazy: written with the next group; losing it in a crash only means a redelivery. */
  note(rec: JournalRecord): void {
    if (this.closed) return;
    this.lines.push(JSON.stringify(rec) + "\n");
    this.kick();
  }

  async flush(): Promise<void> {
    while (this.running) await this.running;
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    await this.fh.close().catch(() => {});
  }

  private kick(): void {
    if (this.running) return;
    // setImmediate: let every publish of this tick join the group before writing.
    this.running = new Promise<void>((r) => setImmediate(r))
      .then(() => this.drain())
      .finally(() => {
        this.running = null;
        if (this.lines.length > 0 && !this.closed) this.kick();
      });
  }

  private async drain(): Promise<void> {
    while (this.lines.length > 0) {
      const buf = Buffer.from(this.lines.join(""));
      const waiters = this.waiters;
      this.lines = [];
      this.waiters = [];
      try {
        await this.fh.write(buf);
        await this.fh.datasync();
        this.size += buf.length;
        for (const w of waiters) w.resolve();
      } catch (err) {
        const e = new BusError("journal write failed", { cause: err });
        for (const w of waiters) w.reject(e);
      }
      if (this.owner && this.size > this.compactAt && this.size > 2 * this.owner.liveBytes()) await this.compact();
    }
  }

  private async compact(): Promise<void> {
    // The snapshot already contains what the queued lines describe, so they are dropped, and
    // their writers released once the new file is durable.
    const records = this.owner!.snapshot();
    const lines = this.lines;
    const waiters = this.waiters;
    this.lines = [];
    this.waiters = [];
    const tmp = `${this.path}.tmp`;
    let renamed = false;
    try {
      const text = records.map((r) => JSON.stringify(r) + "\n").join("");
      const out = await open(tmp, "w");
      try {
        await out.write(text);
        await out.sync();
      } finally {
        await out.close();
      }
      await rename(tmp, this.path);
      renamed = true;
      await syncDir(dirname(this.path));
      await this.fh.close().catch(() => {});
      this.fh = await open(this.path, "a");
      this.size = Buffer.byteLength(text);
      this.compactAt = this.minCompactBytes;
      for (const w of waiters) w.resolve();
    } catch (err) {
      if (renamed) {
        const e = new BusError("journal compaction failed", { cause: err });
        for (const w of waiters) w.reject(e);
      } else {
        // The old file is intact: append the held-back records to it instead, compact later.
        this.lines = lines.concat(this.lines);
        this.waiters = waiters.concat(this.waiters);
      }
      this.compactAt = this.size * 2;
    }
  }
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, "r");
  try {
    await fh.sync();
  } catch {
    // some filesystems refuse fsync on a directory; the rename is still atomic
  } finally {
    await fh.close();
  }
}
