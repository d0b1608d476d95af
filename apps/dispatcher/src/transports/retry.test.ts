import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { DEFAULT_RETRY_POLICY, retryDelayMs, sendWithRetry } from "./retry";
import { fail, type AppCredentials, type SendItem, type SendResult, type Transport } from "./types";

const policy = { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 5000 };

describe("retryDelayMs", () => {
  test("never retries successes or permanent failures", () => {
    expect(retryDelayMs({ ok: true }, 1, policy)).toBeNull();
    expect(retryDelayMs(fail("UNREGISTERED", { tokenInvalid: true }), 1, policy)).toBeNull();
    expect(retryDelayMs(fail("INVALID_ARGUMENT"), 1, policy)).toBeNull();
  });
  test("stops after maxAttempts", () => {
    expect(retryDelayMs(fail("x", { retryable: true }), 3, policy)).not.toBeNull();
    expect(retryDelayMs(fail("x", { retryable: true }), 4, policy)).toBeNull();
  });
  test("full jitter under an exponential cap", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 3 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (attempt, r) => {
      const d = retryDelayMs(fail("x", { retryable: true }), attempt, policy, () => r)!;
      const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
      return d >= 0 && d < cap;
    }));
    expect(retryDelayMs(fail("x", { retryable: true }), 1, policy, () => 0.999)).toBeLessThan(100);
    expect(retryDelayMs(fail("x", { retryable: true }), 3, policy, () => 0.999)).toBeGreaterThan(390);
  });
  test("honours Retry-After as a floor, and gives up on one beyond the policy", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 5000 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (ra, r) => {
      const d = retryDelayMs(fail("x", { retryable: true, retryAfterMs: ra }), 1, policy, () => r)!;
      return d >= ra && d < ra + policy.baseDelayMs;
    }));
    expect(retryDelayMs(fail("x", { retryable: true, retryAfterMs: 5001 }), 1, policy)).toBeNull();
    expect(DEFAULT_RETRY_POLICY.maxAttempts).toBeGreaterThan(1);
  });
});

/** A scripted transport: the unit under test here is the retry loop, not a provider. */
function scripted(script: Record<string, SendResult[]>) {
  const calls: string[][] = [];
  const t: Transport = {
    kind: "fcm",
    async send(_c: AppCredentials, items: SendItem[]) {
      calls.push(items.map((i) => i.recipient.token));
      return items.map((i) => script[i.recipient.token].shift() ?? { ok: true });
    },
    async close() {},
  };
  return { t, calls };
}

const item = (token: string): SendItem => ({ recipient: { device_id: 1, token }, content: { msg_id: token, title: "t", body: "b" } });
const creds: AppCredentials = { appId: 1, version: "1" };

describe("sendWithRetry", () => {
  test("re-sends only the transient failures, waits at least Retry-After, keeps order", async () => {
    const { t, calls } = scripted({
      ok: [{ ok: true }],
      dead: [fail("UNREGISTERED", { tokenInvalid: true })],
      busy: [fail("QUOTA_EXCEEDED", { retryable: true, retryAfterMs: 300 }), fail("INTERNAL", { retryable: true }), { ok: true }],
    });
    const waits: number[] = [];
    const res = await sendWithRetry(t, creds, [item("ok"), item("dead"), item("busy")], { policy, sleep: async (ms) => void waits.push(ms) });
    expect(res).toEqual([{ ok: true }, fail("UNREGISTERED", { tokenInvalid: true }), { ok: true }]);
    expect(calls).toEqual([["ok", "dead", "busy"], ["busy"], ["busy"]]);
    expect(waits.length).toBe(2);
    expect(waits[0]).toBeGreaterThanOrEqual(300);
  });
  test("gives up after maxAttempts with the last failure", async () => {
    const always = Array.from({ length: 10 }, () => fail("http_503", { retryable: true }));
    const { t, calls } = scripted({ x: always });
    const res = await sendWithRetry(t, creds, [item("x")], { policy, sleep: async () => {} });
    expect(res[0]).toMatchObject({ ok: false, retryable: true, reason: "http_503" });
    expect(calls.length).toBe(policy.maxAttempts);
  });
});
