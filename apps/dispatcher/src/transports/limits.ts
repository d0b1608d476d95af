/**
 * Provider limits as named constants, and the two primitives that keep the dispatcher under them:
 * a counting semaphore (bounded concurrency per transport and per app) and a pacing rate limiter
 * (FCM's per-project message rate).
 */

/** `sendEach` accepts at most this many messages per call (firebase-admin and the FCM docs). */
export const FCM_MAX_BATCH_SIZE = 500;
/** FCM HTTP v1 default quota: messages per minute per project. */
export const FCM_PROJECT_MESSAGES_PER_MINUTE = 600_000;
/** Share of the quota the dispatcher uses, so that bursts never cross the per-minute limit. */
export const FCM_RATE_SAFETY = 0.95;
/** FCM rejects messages whose data + notification exceed 4096 bytes. */
export const FCM_MAX_PAYLOAD_BYTES = 4096;
/** APNs rejects notification payloads over 4 KB (413 PayloadTooLarge). */
export const APNS_MAX_PAYLOAD_BYTES = 4096;
/** Push services accept aes128gcm bodies up to 4096 bytes: 86 bytes of header, 16 of tag, 1 pad delimiter. */
export const WEBPUSH_MAX_PAYLOAD_BYTES = 4096 - 86 - 16 - 1;
/** Default time a provider keeps an undelivered push (seconds). */
export const DEFAULT_TTL_SECONDS = 24 * 3600;

export class Semaphore {
  private waiters: (() => void)[] = [];
  private used = 0;
  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError("semaphore size must be a positive integer");
  }
  get inUse(): number {
    return this.used;
  }
  acquire(): Promise<void> {
    if (this.used < this.size) {
      this.used++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }
  /** Hands the slot straight to the next waiter, so a released slot is never stolen. */
  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.used--;
  }
  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }
}

/**
 * Paces work to `perSecond` with a burst allowance of `burstSeconds` worth of units (GCRA,
 * virtual scheduling). Over any window of T seconds at most perSecond * (T + burstSeconds) units
 * pass. take(n) reserves n units at once; callers wait their turn in arrival order.
 */
export class RateLimiter {
  private tat = 0; // theoretical arrival time of the next unit, ms (performance.now clock)
  private readonly perMs: number;
  private readonly burstMs: number;
  constructor(perSecond: number, burstSeconds = 1, private readonly now: () => number = () => performance.now()) {
    if (!(perSecond > 0)) throw new RangeError("rate must be positive");
    this.perMs = perSecond / 1000;
    this.burstMs = burstSeconds * 1000;
  }
  /** Milliseconds the caller must wait before sending n units (the reservation is made now). */
  reserve(n: number): number {
    const t = this.now();
    this.tat = Math.max(this.tat, t) + n / this.perMs;
    return Math.max(0, this.tat - this.burstMs - t);
  }
  async take(n: number): Promise<void> {
    const wait = this.reserve(n);
    if (wait > 0) await Bun.sleep(wait);
  }
}

/** Keyed semaphores, e.g. one per app id, created on first use. */
export class KeyedSemaphores<K> {
  private map = new Map<K, Semaphore>();
  constructor(private readonly size: number) {}
  get(key: K): Semaphore {
    let s = this.map.get(key);
    if (!s) this.map.set(key, (s = new Semaphore(this.size)));
    return s;
  }
  /** Drops idle entries so the map does not grow with every app ever seen. */
  prune(): void {
    for (const [k, s] of this.map) if (s.inUse === 0) this.map.delete(k);
  }
}
