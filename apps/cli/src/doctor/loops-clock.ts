import type { HttpFetch } from "@loops-sync/loops-client";

/** Loops' clock against ours, read from the `Date` header of the answers doctor gets anyway. */
export interface LoopsClock {
  /** The client's HTTP (the global fetch), reading each answer's `Date` header on the way. */
  fetch: HttpFetch;
  /** Seconds Loops' clock is ahead of ours (negative: behind), the median of every answer; undefined: none. */
  skewSeconds(): number | undefined;
  /** How many answers carried a readable `Date` header. */
  samples(): number;
}

/**
 * `Date` has whole seconds, so Loops' time at its answer lies in [date, date + 1 s); it was written somewhere
 * between our send and our receipt. Both midpoints make the estimate good to about half a second plus half
 * the round trip, far inside the 60 s that matter here. The median shrugs off one slow answer.
 */
export function createLoopsClock(base: HttpFetch = fetch, now: () => number = Date.now): LoopsClock {
  const skews: number[] = [];
  return {
    async fetch(url, init) {
      const sent = now();
      const response = await base(url, init);
      const received = now();
      const date = Date.parse(response.headers.get("date") ?? "");
      if (!Number.isNaN(date)) skews.push((date + 500 - (sent + received) / 2) / 1000);
      return response;
    },
    skewSeconds() {
      if (skews.length === 0) return undefined;
      const sorted = [...skews].sort((a, b) => a - b);
      const mid = sorted.length >> 1;
      return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
    },
    samples: () => skews.length,
  };
}
