import { expect, test } from "bun:test";
import { fastRng, seededRng } from "./index";

test("seededRng: same seed, same sequence; different seeds differ", () => {
  const a = seededRng(42);
  const b = seededRng(42);
  const c = seededRng(43);
  const xs = Array.from({ length: 100 }, () => a());
  expect(Array.from({ length: 100 }, () => b())).toEqual(xs);
  expect(Array.from({ length: 100 }, () => c())).not.toEqual(xs);
});

test("both sources stay in [0, 1) and spread evenly over ten buckets", () => {
  for (const rng of [seededRng(7), fastRng]) {
    const buckets = new Array(10).fill(0);
    for (let i = 0; i < 100_000; i++) {
      const x = rng();
      expect(x >= 0 && x < 1).toBe(true);
      buckets[Math.floor(x * 10)]++;
    }
    // expected 10,000 each; 9,500..10,500 is about 5 standard deviations
    for (const n of buckets) expect(Math.abs(n - 10_000)).toBeLessThan(500);
  }
});

test("seededRng uses 53 bits: draws are not multiples of 2^-32", () => {
  const rng = seededRng(1);
  const fine = Array.from({ length: 20 }, () => rng()).filter((x) => !Number.isInteger(x * 2 ** 32));
  expect(fine.length).toBeGreaterThan(15);
});

test("odd seeds (NaN, negative, fractional) still give a working source", () => {
  for (const s of [NaN, -1, 1.5, 2 ** 40]) {
    const x = seededRng(s)();
    expect(x >= 0 && x < 1).toBe(true);
  }
});
