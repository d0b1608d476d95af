import { Value } from "@sinclair/typebox/value";
import { AppDirectoryEntry, IngestSubjects, Subjects, type AppLookupReply } from "@pushstack/schema";
import { decodeJson, type Bus, type KvEntry, type Subscription } from "@pushstack/bus";
import type { Logger } from "@pushstack/config";
import { RateLimiter } from "./ratelimit";

/** Core could not be asked about an app the directory does not know: answer 503, not a wrong 404. */
export class DirectoryUnavailable extends Error {
  override name = "DirectoryUnavailable";
}

export interface DirectoryOptions {
  /** How long "no such app" from core is believed. Default 10 s. */
  negativeTtlMs?: number;
  /** Bound of the negative cache. Default 10,000 ids. */
  maxNegative?: number;
  /** Questions to core per second about unknown apps, whatever the traffic. Default 50. */
  lookupsPerSec?: number;
  /** Re-watch (full replay) this often even without a reconnect. Default 10 min. */
  rewatchEveryMs?: number;
}

/**
 * The apps an edge knows, in memory: a watch of the KV bucket core keeps current (`app_directory`).
 * A full replay builds a fresh map that replaces the old one, so deletions missed while disconnected
 * disappear too; the watch is renewed after every reconnect and periodically.
 *
 * An app missing from the map may be one created a moment ago: core is asked (request-reply), with
 * concurrent questions about one id coalesced, answers "no such app" cached briefly and the rate of
 * questions bounded, so a flood of made-up ids cannot reach the database.
 */
export class AppDirectory {
  private entries = new Map<number, AppDirectoryEntry>();
  private readonly negative = new Map<number, number>();
  private readonly asking = new Map<number, Promise<AppDirectoryEntry | null>>();
  private readonly lookupLimit: RateLimiter;
  private watch: Subscription | null = null;
  private loaded = false;
  private stopped = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private wasConnected = false;
  private lastWatch = 0;
  private watching: Promise<void> | null = null;

  constructor(
    private readonly bus: () => Bus,
    private readonly log: Logger,
    private readonly opts: DirectoryOptions = {},
  ) {
    this.lookupLimit = new RateLimiter(opts.lookupsPerSec ?? 50, { maxKeys: 1, sweepEveryMs: 0 });
  }

  /** True once a full replay of the bucket has been applied. */
  get ready(): boolean {
    return this.loaded;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Starts watching; resolves after the first replay, or after `waitMs` (retrying in the background). */
  async start(waitMs = 5000): Promise<void> {
    this.timer = setInterval(() => this.tick(), 1000);
    (this.timer as { unref?: () => void }).unref?.();
    const first = this.rewatch();
    await Promise.race([first, Bun.sleep(waitMs)]);
  }

  private tick(): void {
    if (this.stopped) return;
    const connected = this.bus().isConnected();
    const stale = Date.now() - this.lastWatch > (this.opts.rewatchEveryMs ?? 600_000);
    // a (re)connection, a watch that never started, or a periodic refresh
    if (connected && (!this.wasConnected || !this.watch || stale)) void this.rewatch();
    this.wasConnected = connected;
  }

  private rewatch(): Promise<void> {
    if (this.watching) return this.watching;
    this.watching = (async () => {
      try {
        const kv = await this.bus().kv(Subjects.appDirectoryBucket);
        const fresh = new Map<number, AppDirectoryEntry>();
        const sub = await kv.watch((e) => this.apply(fresh, e));
        if (this.stopped) {
          await sub.stop();
          return;
        }
        const old = this.watch;
        this.entries = fresh;
        this.watch = sub;
        this.loaded = true;
        this.lastWatch = Date.now();
        this.wasConnected = true;
        await old?.stop().catch(() => {});
        this.log.info("app directory loaded", { apps: fresh.size });
      } catch (err) {
        this.log.warn("app directory watch failed; retrying", { err });
      } finally {
        this.watching = null;
      }
    })();
    return this.watching;
  }

  private apply(into: Map<number, AppDirectoryEntry>, e: KvEntry): void {
    const id = Number(e.key);
    if (!Number.isInteger(id)) return;
    if (e.operation === "DEL") {
      into.delete(id);
      return;
    }
    let v: unknown;
    try {
      v = e.json();
    } catch {}
    if (!Value.Check(AppDirectoryEntry, v)) {
      this.log.warn("app directory entry ignored: malformed", { key: e.key });
      return;
    }
    into.set(id, v);
    this.negative.delete(id);
  }

  /** Known without asking anyone (the hot path). */
  known(appId: number): AppDirectoryEntry | undefined {
    return this.entries.get(appId);
  }

  /**
   * The app, or null when there is none. Asks core about an id the directory does not know;
   * throws DirectoryUnavailable when that was needed and core could not answer.
   */
  async find(appId: number): Promise<AppDirectoryEntry | null> {
    const e = this.entries.get(appId);
    if (e) return e;
    if (!Number.isSafeInteger(appId) || appId < 1 || appId > 2147483647) return null;
    const until = this.negative.get(appId);
    if (until !== undefined) {
      if (until > Date.now()) return null;
      this.negative.delete(appId);
    }
    const pending = this.asking.get(appId);
    if (pending) return pending;
    // over the question budget: the directory's word stands
    if (this.lookupLimit.take("all") > 0) {
      if (!this.loaded) throw new DirectoryUnavailable("app directory not loaded yet");
      return null;
    }
    const p = this.ask(appId).finally(() => this.asking.delete(appId));
    this.asking.set(appId, p);
    return p;
  }

  private async ask(appId: number): Promise<AppDirectoryEntry | null> {
    let reply: AppLookupReply;
    try {
      reply = decodeJson<AppLookupReply>(await this.bus().request(IngestSubjects.appLookup, JSON.stringify({ app_id: appId }), { timeoutMs: 2000 }));
    } catch (err) {
      throw new DirectoryUnavailable(`cannot confirm app ${appId}: ${(err as Error).message}`);
    }
    const entry = reply?.entry;
    if (entry && Value.Check(AppDirectoryEntry, entry) && entry.id === appId) {
      // the watch brings it too; this only saves the next requests a question
      if (!this.entries.has(appId)) this.entries.set(appId, entry);
      return entry;
    }
    if (this.negative.size >= (this.opts.maxNegative ?? 10_000)) this.negative.delete(this.negative.keys().next().value!);
    this.negative.set(appId, Date.now() + (this.opts.negativeTtlMs ?? 10_000));
    return null;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.watching?.catch(() => {});
    await this.watch?.stop().catch(() => {});
    this.watch = null;
    this.lookupLimit.stop();
  }
}
