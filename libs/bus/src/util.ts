/**
 * Helpers shared by both bus implementations, so that bad input is refused the same way
 * (always with a BusError) whichever implementation runs.
 */
import { BusError } from "./types";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function toBytes(data: Uint8Array | string): Uint8Array {
  if (typeof data === "string") return encoder.encode(data);
  if (data instanceof Uint8Array) return data;
  throw new BusError("data must be a Uint8Array or a string");
}

export function encodeJson(obj: unknown): Uint8Array {
  const text = JSON.stringify(obj);
  if (text === undefined) throw new BusError("value is not JSON-serialisable");
  return encoder.encode(text);
}

export function decodeJson<T = unknown>(bytes: Uint8Array): T {
  try {
    return JSON.parse(decoder.decode(bytes)) as T;
  } catch (err) {
    throw new BusError(`payload is not valid JSON: ${(err as Error).message}`);
  }
}

const NAME = /^[A-Za-z0-9_-]+$/;
/** Stream, durable, bucket and prefix names: what NATS accepts everywhere (no dots, no wildcards). */
export function checkName(kind: string, name: unknown): string {
  if (typeof name !== "string" || !NAME.test(name) || name.length > 200) {
    throw new BusError(`invalid ${kind} name ${JSON.stringify(name)}: use letters, digits, "_" and "-"`);
  }
  return name;
}

const TOKEN = /^[^\s.*>]+$/;
const PLAIN = /^[^\s.*>]+(\.[^\s.*>]+)*$/;
/**
 * A NATS subject: dot-separated non-empty tokens without whitespace. Wildcards ("*" as a whole
 * token, ">" as the last token) only where a pattern is allowed.
 */
export function checkSubject(subject: unknown, wildcards: boolean): string {
  // Fast path for the common case (publishing is hot): plain tokens, no wildcard characters.
  if (typeof subject === "string" && subject.length <= 1024 && PLAIN.test(subject)) return subject;
  if (typeof subject !== "string" || subject.length === 0 || subject.length > 1024) {
    throw new BusError(`invalid subject ${JSON.stringify(subject)}`);
  }
  const tokens = subject.split(".");
  tokens.forEach((t, i) => {
    if (wildcards && (t === "*" || (t === ">" && i === tokens.length - 1))) return;
    if (!TOKEN.test(t)) throw new BusError(`invalid subject ${JSON.stringify(subject)}`);
  });
  return subject;
}

const KEY = /^[-/=.\w]+$/;
/** KV keys as NATS KV accepts them. */
export function checkKey(key: unknown): string {
  if (typeof key !== "string" || !KEY.test(key) || key.startsWith(".") || key.endsWith(".") || key.includes("..")) {
    throw new BusError(`invalid key ${JSON.stringify(key)}`);
  }
  return key;
}

/** Does the concrete subject match the pattern ("*" one token, ">" one or more)? */
export function subjectMatches(pattern: string, subject: string): boolean {
  if (pattern === subject) return true;
  const p = pattern.split(".");
  const s = subject.split(".");
  for (let i = 0; i < p.length; i++) {
    if (p[i] === ">") return s.length > i;
    if (i >= s.length) return false;
    if (p[i] !== "*" && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
}

/** Can some subject match both patterns? (NATS refuses overlapping consumers on a work queue.) */
export function subjectsCollide(a: string, b: string): boolean {
  const x = a.split(".");
  const y = b.split(".");
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (x[i] === ">" || y[i] === ">") return true;
    if (x[i] === undefined || y[i] === undefined) return false;
    if (x[i] !== "*" && y[i] !== "*" && x[i] !== y[i]) return false;
  }
  return true;
}

export function checkHeaders(h: unknown): Record<string, string> {
  if (h === undefined) return {};
  if (typeof h !== "object" || h === null) throw new BusError("headers must be an object of strings");
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (typeof v !== "string" || !/^[!-9;-~]+$/.test(k) || /[\r\n]/.test(v)) {
      throw new BusError(`invalid header ${JSON.stringify(k)}`);
    }
    out[k] = v;
  }
  return out;
}

export function checkPositive(name: string, v: number | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) throw new BusError(`${name} must be a positive number`);
  return v;
}

/** The msgId window: default 2 minutes, never longer than maxAge (JetStream refuses that). */
export function duplicateWindow(cfg: { duplicateWindowMs?: number; maxAgeMs?: number }): number {
  const w = checkPositive("duplicateWindowMs", cfg.duplicateWindowMs, 120_000);
  return cfg.maxAgeMs === undefined ? w : Math.min(w, checkPositive("maxAgeMs", cfg.maxAgeMs, 1));
}

/** Redelivery delay after a handler threw without settling its message. */
export function failureBackoffMs(deliveryCount: number): number {
  return Math.min(250 * 2 ** Math.max(0, deliveryCount - 1), 30_000);
}

/** Header a replier sets when its handler failed; the requester turns it into a BusError. */
export const REPLY_ERROR_HEADER = "Bus-Reply-Error";

export function jsonOf<T>(bytes: Uint8Array): () => T {
  return () => decodeJson<T>(bytes);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref?.());
}

/** Concurrency gate: acquire() resolves when fewer than `limit` holders are inside. */
export class Gate {
  private inside = 0;
  private waiters: Array<() => void> = [];
  constructor(private readonly limit: number) {}
  acquire(): Promise<void> {
    if (this.inside < this.limit) {
      this.inside++;
      return Promise.resolve();
    }
    return new Promise((r) => this.waiters.push(() => r()));
  }
  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.inside--;
  }
}
