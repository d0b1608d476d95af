/**
 * Embedded KV bucket: latest value per key with bucket-wide revisions (as a NATS KV bucket's
 * stream sequence), delete markers, and watchers. With a file, the current values are rewritten
 * (tmp + fsync + rename) on every change before put()/delete() resolve; buckets are small.
 * Concurrent changes share one rewrite.
 */
import { mkdir, open, readFile, rename } from "node:fs/promises";
import { dirname } from "node:path";
import { BusError, BusUnavailable, type KvBucket, type KvEntry, type Subscription } from "./types";
import { checkKey, jsonOf, toBytes } from "./util";

interface Slot {
  value: Uint8Array;
  revision: number;
  op: "PUT" | "DEL";
}

export class MemKv implements KvBucket {
  private readonly slots = new Map<string, Slot>();
  private rev = 0;
  private readonly watchers = new Set<(e: KvEntry) => void>();
  private chain: Promise<void> = Promise.resolve();
  private next: Promise<void> | null = null;
  closed = false;

  private constructor(private readonly file: string | null) {}

  static async open(file: string | null): Promise<MemKv> {
    const kv = new MemKv(file);
    if (!file) return kv;
    try {
      const saved = JSON.parse(await readFile(file, "utf8")) as { rev: number; entries: [string, string, number][] };
      kv.rev = saved.rev;
      for (const [k, v, r] of saved.entries) kv.slots.set(k, { value: new Uint8Array(Buffer.from(v, "base64")), revision: r, op: "PUT" });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw new BusError(`cannot read KV file ${file}`, { cause: err });
    }
    return kv;
  }

  async get(key: string): Promise<KvEntry | null> {
    const s = this.slots.get(checkKey(key));
    return s && s.op === "PUT" ? entry(key, s) : null;
  }

  async put(key: string, value: Uint8Array | string): Promise<number> {
    return this.change(checkKey(key), toBytes(value).slice(), "PUT");
  }

  async delete(key: string): Promise<void> {
    await this.change(checkKey(key), new Uint8Array(0), "DEL");
  }

  async keys(): Promise<string[]> {
    return [...this.slots].filter(([, s]) => s.op === "PUT").map(([k]) => k).sort();
  }

  async watch(onEntry: (e: KvEntry) => void): Promise<Subscription> {
    if (typeof onEntry !== "function") throw new BusError("onEntry must be a function");
    const current = [...this.slots].filter(([, s]) => s.op === "PUT").sort((a, b) => a[1].revision - b[1].revision);
    for (const [k, s] of current) safeCall(onEntry, entry(k, s));
    this.watchers.add(onEntry);
    return {
      stop: async () => {
        this.watchers.delete(onEntry);
      },
    };
  }

  private async change(key: string, value: Uint8Array, op: "PUT" | "DEL"): Promise<number> {
    if (this.closed) throw new BusUnavailable("bus is closed");
    const slot: Slot = { value, revision: ++this.rev, op };
    this.slots.set(key, slot);
    await this.persist();
    const e = entry(key, slot);
    for (const w of this.watchers) safeCall(w, e);
    return slot.revision;
  }

  /** Resolves after a rewrite that started after this call. */
  persist(): Promise<void> {
    if (!this.file) return Promise.resolve();
    if (this.next) return this.next;
    const p = this.chain.then(() => {
      this.next = null;
      return this.writeNow();
    });
    this.next = p;
    this.chain = p.catch(() => {});
    return p;
  }

  private async writeNow(): Promise<void> {
    const file = this.file!;
    const entries = [...this.slots].filter(([, s]) => s.op === "PUT").map(([k, s]) => [k, Buffer.from(s.value).toString("base64"), s.revision]);
    try {
      await mkdir(dirname(file), { recursive: true });
      const tmp = `${file}.tmp`;
      const fh = await open(tmp, "w");
      try {
        await fh.write(JSON.stringify({ rev: this.rev, entries }));
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, file);
    } catch (err) {
      throw new BusError("KV write failed", { cause: err });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.watchers.clear();
    await this.chain;
  }
}

function entry(key: string, s: Slot): KvEntry {
  return { key, value: s.value.slice(), revision: s.revision, operation: s.op, json: jsonOf(s.value) };
}

function safeCall(fn: (e: KvEntry) => void, e: KvEntry): void {
  try {
    fn(e);
  } catch {
    // a failing watcher must not break the writer
  }
}
