/**
 * Test helpers for the bus suites (not exported from index.ts).
 */
export function uniquePrefix(tag = "t"): string {
  return `${tag}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}

/** Polls until cond() is true; fails with `what` after timeoutMs. */
export async function waitFor(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

/** Resolves with the rejection of p (fails when p resolves), and how long it took. */
export async function rejection(p: Promise<unknown>): Promise<{ err: Error; ms: number }> {
  const t = Date.now();
  try {
    await p;
  } catch (err) {
    return { err: err as Error, ms: Date.now() - t };
  }
  throw new Error("expected a rejection");
}

export const text = (b: Uint8Array) => new TextDecoder().decode(b);
