/**
 * A NATS KV bucket behind the KvBucket interface: get() hides delete markers, watch() replays the
 * current values (without the delete markers NATS replays too) and resolves once the replay is done.
 */
import type { KV } from "@nats-io/kv";
import { KvWatchInclude } from "@nats-io/kv";
import { BusError, type KvBucket, type KvEntry, type Subscription } from "./types";
import { checkKey, jsonOf, sleep, toBytes } from "./util";

/** Runs a server call with the bus's availability checks and error mapping. */
export type Runner = <T>(fn: () => Promise<T>) => Promise<T>;

export class NatsKv implements KvBucket {
  constructor(
    private readonly kv: KV,
    private readonly run: Runner,
  ) {}

  async get(key: string): Promise<KvEntry | null> {
    checkKey(key);
    const e = await this.run(() => this.kv.get(key));
    if (!e || e.operation !== "PUT") return null;
    return entry(e.key, e.value, e.revision, "PUT");
  }

  put(key: string, value: Uint8Array | string): Promise<number> {
    try {
      checkKey(key);
      const v = toBytes(value);
      return this.run(() => this.kv.put(key, v));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    await this.run(() => this.kv.delete(key));
  }

  keys(): Promise<string[]> {
    return this.run(async () => {
      const out: string[] = [];
      for await (const k of await this.kv.keys()) out.push(k);
      return out.sort();
    });
  }

  async watch(onEntry: (e: KvEntry) => void): Promise<Subscription> {
    if (typeof onEntry !== "function") throw new BusError("onEntry must be a function");
    // The replay ends at the entry with nothing pending behind it; an empty bucket has no replay.
    const status = await this.run(() => this.kv.status());
    let replaying = status.values > 0;
    let replayed!: () => void;
    const replayDone = new Promise<void>((r) => (replayed = r));
    if (!replaying) replayed();
    const iter = await this.run(() => this.kv.watch({ include: KvWatchInclude.LastValue }));
    const loop = (async () => {
      for await (const e of iter) {
        const op = e.operation === "PUT" ? "PUT" : "DEL";
        const wasReplay = replaying;
        if (replaying && e.delta === 0) {
          replaying = false;
          queueMicrotask(replayed);
        }
        if (wasReplay && op !== "PUT") continue; // replay shows current values only
        try {
          onEntry(entry(e.key, e.value, e.revision, op));
        } catch {
          // a failing watcher must not stop the watch
        }
      }
    })().catch(() => {});
    // A replay that never ends (bucket purged meanwhile) must not block the caller forever.
    await Promise.race([replayDone, sleep(5000)]);
    return {
      stop: async () => {
        iter.stop();
        await loop;
      },
    };
  }
}

function entry(key: string, value: Uint8Array, revision: number, operation: "PUT" | "DEL"): KvEntry {
  return { key, value, revision, operation, json: jsonOf(value) };
}
