/**
 * Random sources for the per-device operators. A template's randomness only spreads variants over an
 * audience, it protects nothing, so production uses the fastest source there is (fastRng); tests and
 * the benchmark use seededRng for reproducible output.
 */
export type Rng = () => number; // [0, 1)

/**
 * Production source: the runtime's Math.random (xorshift128+ in JavaScriptCore and V8, seeded by the
 * runtime from OS entropy, 53-bit doubles). Not crypto-quality, deliberately: crypto.getRandomValues
 * costs a system-level call per draw and buys nothing here.
 */
export const fastRng: Rng = () => Math.random();

/**
 * Deterministic source for tests and benchmarks: sfc32 seeded through splitmix32, two 32-bit outputs
 * per draw so every value is a uniform 53-bit double (a {Random} span can reach 2e15).
 */
export function seededRng(seed: number): Rng {
  let s = (Number.isFinite(seed) ? Math.trunc(seed) : 0) >>> 0;
  const split = () => {
    s = (s + 0x9e3779b9) | 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = split();
  let b = split();
  let c = split();
  let d = 1;
  const next = () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 12; i++) next(); // warm-up, as sfc32's author recommends
  return () => ((next() >>> 5) * 67108864 + (next() >>> 6)) / 9007199254740992;
}
