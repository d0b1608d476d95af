import { badRequest } from "@pushstack/http";
import type { Plan } from "@pushstack/schema";

/**
 * Exact money and calendar arithmetic for billing. No float ever holds an amount: cents are
 * integers, crypto amounts are decimal text compared as scaled BigInts.
 */

/**
 * The daily charge, in cents:
 *   floor( base_cents / 30  +  max(0, installs - included) * overage_cents_per_1000 / 1000 )
 * The floor applies once, to the exact sum of both terms (not to each term): the customer is never
 * charged a fraction of a cent, and never loses more than one cent a day to rounding. Computed as one
 * integer division over the common denominator 3000, in BigInt, so no intermediate is rounded.
 */
export function dailyChargeCents(plan: Pick<Plan, "monthlyPriceCents" | "includedInstalls" | "overagePer1000Cents">, installs: number): number {
  const over = BigInt(Math.max(0, Math.trunc(installs) - plan.includedInstalls));
  const numerator = BigInt(plan.monthlyPriceCents) * 100n + over * BigInt(plan.overagePer1000Cents) * 3n;
  return Number(numerator / 3000n); // BigInt division truncates; numerator >= 0, so this is the floor
}

/** Whole days a balance pays for at a daily cost; 0 when nothing is charged per day (see the balance object). */
export function daysRemaining(balanceCents: number, dailyCents: number): number {
  if (dailyCents <= 0 || balanceCents <= 0) return 0;
  return Math.floor(balanceCents / dailyCents);
}

/** `1234` → `"12.34"` (integer arithmetic; for invoices and e-mails). */
export function centsToUsd(cents: number): string {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}`;
}

/** A USD amount as a number or text with at most 2 decimals → cents, exactly; anything else is a 400. */
export function usdToCents(value: number | string, field = "amount_usd"): number {
  const text = typeof value === "number" ? (Number.isFinite(value) ? String(value) : "") : value.trim();
  const m = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(text);
  if (!m) throw badRequest(`${field} must be a USD amount with at most 2 decimals, e.g. 10 or 25.50`);
  return Number(m[1]) * 100 + Number((m[2] ?? "").padEnd(2, "0"));
}

/** Compares two non-negative decimal texts exactly ("0.00100000" vs "0.001" → 0). Throws on non-decimals. */
export function compareDecimal(a: string, b: string): -1 | 0 | 1 {
  const parse = (s: string) => {
    const m = /^(-)?(\d+)(?:\.(\d+))?$/.exec(s.trim());
    if (!m) throw new Error(`not a decimal: ${s}`);
    return { neg: !!m[1], int: m[2]!, frac: m[3] ?? "" };
  };
  const x = parse(a);
  const y = parse(b);
  const scale = Math.max(x.frac.length, y.frac.length);
  const big = (p: ReturnType<typeof parse>) => (p.neg ? -1n : 1n) * BigInt(p.int + p.frac.padEnd(scale, "0"));
  const d = big(x) - big(y);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

// ---- UTC days ("YYYY-MM-DD") ----

const DAY_MS = 86_400_000;

export const utcDay = (d: Date): string => d.toISOString().slice(0, 10);
export const dayStart = (day: string): Date => new Date(`${day}T00:00:00.000Z`);
export const dayEnd = (day: string): Date => new Date(dayStart(day).getTime() + DAY_MS);
export const addDays = (day: string, n: number): string => utcDay(new Date(dayStart(day).getTime() + n * DAY_MS));
export const startOfNextDay = (d: Date): Date => dayEnd(utcDay(d));
export const plusDays = (d: Date, n: number): Date => new Date(d.getTime() + n * DAY_MS);

/** A query date: `YYYY-MM-DD` naming a real calendar day (2025-02-30 is refused), else a 400 naming the field. */
export function parseDay(raw: string, field: string): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(raw)) {
    const d = new Date(`${raw}T00:00:00Z`);
    if (!Number.isNaN(d.getTime()) && utcDay(d) === raw) return raw;
  }
  throw badRequest(`${field} must be a date YYYY-MM-DD`);
}
