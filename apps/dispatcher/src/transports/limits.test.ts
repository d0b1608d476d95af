import { describe, expect, test } from "bun:test";
import { FCM_MAX_BATCH_SIZE, FCM_PROJECT_MESSAGES_PER_MINUTE, FCM_RATE_SAFETY, KeyedSemaphores, RateLimiter, Semaphore } from "./limits";

describe("Semaphore", () => {
  test("never lets more than its size run at once, and runs everything", async () => {
    const s = new Semaphore(3);
    let running = 0;
    let peak = 0;
    let done = 0;
    await Promise.all(Array.from({ length: 20 }, (_, i) => s.run(async () => {
      running++;
      peak = Math.max(peak, running);
      await Bun.sleep(i % 3);
      running--;
      done++;
    })));
    expect(peak).toBe(3);
    expect(done).toBe(20);
    expect(s.inUse).toBe(0);
  });
  test("rejects a nonsensical size", () => {
    expect(() => new Semaphore(0)).toThrow(RangeError);
  });
  test("keyed semaphores are per key and pruned when idle", async () => {
    const k = new KeyedSemaphores<number>(1);
    const a = k.get(1);
    await a.acquire();
    expect(k.get(2)).not.toBe(a);
    k.prune();
    expect(k.get(1)).toBe(a); // still held
    a.release();
    k.prune();
    expect(k.get(1)).not.toBe(a);
  });
});

describe("RateLimiter", () => {
  test("over any window, at most rate * (window + burst) units pass", () => {
    let now = 0;
    const r = new RateLimiter(1000, 1, () => now); // 1000/s, 1 s burst
    // Reserve 500-unit batches back to back; each starts at now + wait.
    const starts: number[] = [];
    for (let i = 0; i < 40; i++) starts.push(now + r.reserve(500));
    // 20,000 units: the first 1,000 in the burst, then each batch once its units are paid at 1/ms.
    expect(starts[1]).toBe(0);
    expect(starts[2]).toBe(500);
    expect(starts[39]).toBeCloseTo(40 * 500 - 1000, 6);
    for (let i = 0; i < starts.length; i++) {
      for (let j = i; j < starts.length; j++) {
        const units = (j - i + 1) * 500;
        expect(units).toBeLessThanOrEqual(1000 * ((starts[j] - starts[i]) / 1000 + 1));
      }
    }
  });
  test("FCM constants: 500 per sendEach, 600k/min, used at 95%", () => {
    expect(FCM_MAX_BATCH_SIZE).toBe(500);
    expect(FCM_PROJECT_MESSAGES_PER_MINUTE).toBe(600_000);
    // one minute at the paced rate plus one second of burst stays under the quota
    const perSec = (FCM_PROJECT_MESSAGES_PER_MINUTE / 60) * FCM_RATE_SAFETY;
    expect(perSec * 61).toBeLessThan(FCM_PROJECT_MESSAGES_PER_MINUTE);
  });
});
