import type { AppCredentials, SendItem, SendResult, Transport } from "./types";

/**
 * Retries of transient failures, outside the transports: send() classifies, this decides when
 * (and whether) to try again. Exponential backoff with full jitter, a floor of the provider's
 * Retry-After, a bounded number of attempts; permanent failures are never retried.
 */

export interface RetryPolicy {
  /** Attempts in total, the first included. */
  maxAttempts: number;
  /** Cap of the first backoff; doubles each attempt. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this ends the retries here (the job is better re-queued later). */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  maxAttempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 120_000,
});

/**
 * Delay before the next attempt after `result` came back from attempt number `attempt` (1-based),
 * or null when the result is final.
 */
export function retryDelayMs(result: SendResult, attempt: number, policy: RetryPolicy = DEFAULT_RETRY_POLICY, random: () => number = Math.random): number | null {
  if (result.ok || !result.retryable || attempt >= policy.maxAttempts) return null;
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  if (result.retryAfterMs !== undefined) {
    if (result.retryAfterMs > policy.maxRetryAfterMs) return null;
    // Never earlier than the provider asked; the small jitter spreads a storm's retries.
    return result.retryAfterMs + random() * Math.min(cap, policy.baseDelayMs);
  }
  return random() * cap;
}

export interface RetryOptions {
  policy?: RetryPolicy;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** Called before each retry round with the attempt number about to run and the items in it. */
  onRetry?: (attempt: number, count: number, delayMs: number) => void;
}

/**
 * Sends `items`, then re-sends only the ones that failed transiently, until each has a final
 * result or ran out of attempts. Items that succeeded or failed for good are never sent again.
 */
export async function sendWithRetry(transport: Transport, creds: AppCredentials, items: SendItem[], opts: RetryOptions = {}): Promise<SendResult[]> {
  const policy = opts.policy ?? DEFAULT_RETRY_POLICY;
  const sleep = opts.sleep ?? ((ms: number) => Bun.sleep(ms));
  const random = opts.random ?? Math.random;
  const results: SendResult[] = new Array(items.length);
  let pending = items.map((_, i) => i);
  for (let attempt = 1; pending.length > 0; attempt++) {
    const round = await transport.send(creds, pending.map((i) => items[i]));
    const next: number[] = [];
    let wait = 0;
    round.forEach((r, k) => {
      const i = pending[k];
      results[i] = r;
      const d = retryDelayMs(r, attempt, policy, random);
      if (d !== null) {
        next.push(i);
        wait = Math.max(wait, d);
      }
    });
    if (next.length === 0) break;
    opts.onRetry?.(attempt + 1, next.length, wait);
    await sleep(wait);
    pending = next;
  }
  return results;
}
