import { expect, test } from "bun:test";
import { RateLimiter } from "./ratelimit";

function clocked(limit: number, maxKeys?: number) {
  let now = 1_000;
  const rl = new RateLimiter(limit, { now: () => now, maxKeys, sweepEveryMs: 0 });
  return { rl, advance: (ms: number) => (now += ms) };
}

test("a full bucket admits `limit` requests at once, then refuses with the wait", () => {
  const { rl } = clocked(100);
  for (let i = 0; i < 100; i++) expect(rl.take("a")).toBe(0);
  const wait = rl.take("a");
  expect(wait).toBeGreaterThan(0);
  expect(wait).toBeLessThanOrEqual(10);
  expect(RateLimiter.retryAfterSec(wait)).toBe(1);
  // keys are independent
  expect(rl.take("b")).toBe(0);
});

test("it refills at `limit` per second: a steady 100/s passes, 101/s does not", () => {
  const { rl, advance } = clocked(100);
  for (let i = 0; i < 100; i++) rl.take("a");
  expect(rl.take("a")).toBeGreaterThan(0);
  advance(10);
  expect(rl.take("a")).toBe(0);
  expect(rl.take("a")).toBeGreaterThan(0);
  // after a quiet second the whole burst is back
  advance(1000);
  for (let i = 0; i < 100; i++) expect(rl.take("a")).toBe(0);
  expect(rl.take("a")).toBeGreaterThan(0);
  // over 10 simulated seconds at 1 request per ms, about 100 per second get through
  const { rl: r2, advance: adv2 } = clocked(100);
  let ok = 0;
  for (let ms = 0; ms < 10_000; ms++) {
    if (r2.take("x") === 0) ok++;
    adv2(1);
  }
  expect(ok).toBeGreaterThanOrEqual(1000);
  expect(ok).toBeLessThanOrEqual(1100);
});

test("refused requests do not consume budget", () => {
  const { rl, advance } = clocked(2);
  expect(rl.take("a")).toBe(0);
  expect(rl.take("a")).toBe(0);
  for (let i = 0; i < 50; i++) expect(rl.take("a")).toBeGreaterThan(0);
  advance(500);
  expect(rl.take("a")).toBe(0);
});

test("memory stays bounded under a flood of a million distinct keys", () => {
  const { rl } = clocked(100, 10_000);
  for (let i = 0; i < 1_000_000; i++) rl.take(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}-${i}`);
  expect(rl.size).toBeLessThanOrEqual(10_000);
});

test("keys whose bucket refilled are swept", () => {
  const { rl, advance } = clocked(100);
  for (let i = 0; i < 500; i++) rl.take(`k${i}`);
  expect(rl.size).toBe(500);
  advance(20);
  rl.sweep();
  expect(rl.size).toBe(0);
});
