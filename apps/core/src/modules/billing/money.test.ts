import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { PLANS } from "@pushstack/schema";
import { dailyChargeCents, daysRemaining, usdToCents, centsToUsd, compareDecimal, parseDay, addDays, utcDay } from "./money";

describe("daily charge formula: floor(base/30 + max(0, installs-5000) * overage/1000), floored once", () => {
  // expected values worked out by hand from the spec's table (cents)
  const cases: [keyof typeof PLANS, number, number][] = [
    ["free", 0, 0],
    ["free", 5000, 0],
    ["free", 5001, 0],
    ["free", 50000, 0],
    ["pro", 0, 163], // 4900/30 = 163.33
    ["pro", 5000, 163],
    ["pro", 5001, 163], // 163.33 + 0.033
    ["pro", 50000, 1648], // 163.33 + 45000*33/1000 = 163.33 + 1485 = 1648.33
    ["team", 0, 496], // 14900/30 = 496.67
    ["team", 5000, 496],
    ["team", 5001, 496], // 496.67 + 0.027
    ["team", 50000, 1711], // 496.67 + 1215 = 1711.67
    ["enterprise", 50000, 0], // custom pricing: charged by adjustments
  ];
  for (const [plan, installs, cents] of cases) {
    test(`${plan}, ${installs} installs → ${cents} cents`, () => {
      expect(dailyChargeCents(PLANS[plan], installs)).toBe(cents);
    });
  }

  test("the floor applies to the sum, not to each term", () => {
    // Team, 6013 installs: 496.667 + 1013*27/1000 (= 27.351) = 524.018 → 524; flooring each term would give 496 + 27 = 523
    expect(dailyChargeCents(PLANS.team, 6013)).toBe(524);
    // Pro, 5004 installs: 163.333 + 0.132 = 163.465 → 163
    expect(dailyChargeCents(PLANS.pro, 5004)).toBe(163);
    // Pro, 7021 installs: 163.333 + 66.693 = 230.026 → 230 (per-term flooring: 163 + 66 = 229)
    expect(dailyChargeCents(PLANS.pro, 7021)).toBe(230);
  });

  test("property: the result is the exact floor and never exceeds the exact amount", () => {
    fc.assert(
      fc.property(fc.constantFrom(PLANS.free, PLANS.pro, PLANS.team), fc.integer({ min: 0, max: 10_000_000 }), (plan, installs) => {
        const c = BigInt(dailyChargeCents(plan, installs));
        // exact amount × 3000 as an integer
        const exact = BigInt(plan.monthlyPriceCents) * 100n + BigInt(Math.max(0, installs - 5000)) * BigInt(plan.overagePer1000Cents) * 3n;
        expect(c * 3000n <= exact).toBe(true);
        expect((c + 1n) * 3000n > exact).toBe(true);
      }),
    );
  });

  test("more installs never cost less", () => {
    fc.assert(
      fc.property(fc.constantFrom(PLANS.pro, PLANS.team), fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 1000 }), (plan, n, d) => {
        expect(dailyChargeCents(plan, n + d)).toBeGreaterThanOrEqual(dailyChargeCents(plan, n));
      }),
    );
  });

  test("days remaining: whole days; 0 when nothing is charged", () => {
    expect(daysRemaining(1000, 163)).toBe(6);
    expect(daysRemaining(163, 163)).toBe(1);
    expect(daysRemaining(162, 163)).toBe(0);
    expect(daysRemaining(5000, 0)).toBe(0);
    expect(daysRemaining(0, 163)).toBe(0);
  });
});

describe("exact amounts", () => {
  test("USD text or number → cents without floating point", () => {
    expect(usdToCents("10")).toBe(1000);
    expect(usdToCents(10.1)).toBe(1010);
    expect(usdToCents("0.29")).toBe(29); // 0.29 * 100 = 28.999999999999996 in floating point
    expect(usdToCents(1.15)).toBe(115); // 1.15 * 100 = 114.99999999999999
    expect(usdToCents("25.50")).toBe(2550);
    for (const bad of ["10.001", "-5", "1e3", "", "abc", "10.", ".5"]) expect(() => usdToCents(bad)).toThrow(/amount_usd/);
    expect(() => usdToCents(Number.NaN)).toThrow(/amount_usd/);
    expect(centsToUsd(1005)).toBe("10.05");
    expect(centsToUsd(-7)).toBe("-0.07");
  });

  test("decimal comparison is exact", () => {
    expect(compareDecimal("0.00015385", "0.00015385")).toBe(0);
    expect(compareDecimal("0.0001538500", "0.00015385")).toBe(0);
    expect(compareDecimal("0.00015386", "0.00015385")).toBe(1);
    expect(compareDecimal("0.3", "0.30000000000000004")).toBe(-1);
    expect(compareDecimal("12", "2.5")).toBe(1);
    expect(() => compareDecimal("1e-8", "0")).toThrow();
  });

  test("query days must be real calendar days", () => {
    expect(parseDay("2024-02-29", "date_from")).toBe("2024-02-29");
    for (const bad of ["2025-02-29", "2025-13-01", "2025-1-01", "yesterday", "2025-01-01T00:00:00Z"]) {
      expect(() => parseDay(bad, "date_to")).toThrow("date_to must be a date YYYY-MM-DD");
    }
    expect(addDays("2024-12-31", 1)).toBe("2025-01-01");
    expect(addDays("2025-03-01", -1)).toBe("2025-02-28");
    expect(utcDay(new Date("2025-06-01T23:59:59.999Z"))).toBe("2025-06-01");
  });
});
