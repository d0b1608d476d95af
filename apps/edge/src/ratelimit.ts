/**
 * In-memory rate limiting: `limit` requests per second per key, bursts up to `limit`, as GCRA (a
 * token bucket kept as one number per key: the theoretical arrival time of the next request).
 *
 * Memory is bounded: a key whose bucket has refilled carries no information and is dropped by the
 * sweep, and beyond `maxKeys` the oldest keys are evicted (an evicted key starts again with a full
 * bucket). A flood from a million distinct addresses costs at most `maxKeys` entries.
 */
export class RateLimiter {
  private readonly tat = new Map<string, number>();
  private readonly interval: number;
  private readonly tolerance: number;
  private readonly maxKeys: number;
  private readonly now: () => number;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    readonly limit: number,
    opts: { maxKeys?: number; now?: () => number; sweepEveryMs?: number } = {},
  ) {
    if (!Number.isFinite(limit) || limit <= 0) throw new Error("limit must be a positive number");
    this.interval = 1000 / limit;
    // a full bucket admits `limit` requests at once: the last of them may be (limit - 1) intervals ahead
    this.tolerance = 1000 - this.interval + 1e-6;
    this.maxKeys = opts.maxKeys ?? 100_000;
    this.now = opts.now ?? (() => performance.now());
    if (opts.sweepEveryMs !== 0) {
      this.timer = setInterval(() => this.sweep(), opts.sweepEveryMs ?? 5000);
      (this.timer as { unref?: () => void }).unref?.();
    }
  }

  /** Takes one request for `key`: 0 when allowed, else the milliseconds until one would be. */
  take(key: string): number {
    const now = this.now();
    const prev = this.tat.get(key);
    const t = prev === undefined || prev < now ? now : prev;
    const ahead = t - now;
    if (ahead > this.tolerance) return ahead - this.tolerance;
    this.tat.set(key, t + this.interval);
    if (prev === undefined && this.tat.size > this.maxKeys) this.evict();
    return 0;
  }

  /** Seconds a refused client should wait, for Retry-After (at least 1). */
  static retryAfterSec(waitMs: number): number {
    return Math.max(1, Math.ceil(waitMs / 1000));
  }

  get size(): number {
    return this.tat.size;
  }

  /** Drops keys whose bucket is full again. */
  sweep(): void {
    const now = this.now();
    for (const [k, t] of this.tat) if (t <= now) this.tat.delete(k);
  }

  private evict(): void {
    this.sweep();
    // still too many live keys: drop the oldest tenth (Map iteration is insertion order)
    let excess = this.tat.size - Math.floor(this.maxKeys * 0.9);
    if (excess <= 0) return;
    for (const k of this.tat.keys()) {
      this.tat.delete(k);
      if (--excess <= 0) break;
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
