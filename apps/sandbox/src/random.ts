/** A seeded pseudo-random source: the same seed gives the same sequence, so a faulty run can be replayed. */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** True with probability `p` (0–1). */
  chance(p: number): boolean;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
}

/** mulberry32: tiny, fast and good enough for simulation; not for anything secret. */
export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    chance: (p) => p > 0 && next() < p,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new RangeError("pick needs a non-empty array");
      return items[Math.floor(next() * items.length)]!;
    },
  };
}
