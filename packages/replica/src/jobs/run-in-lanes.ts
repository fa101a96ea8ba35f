/**
 * Runs `work` for every item, at most `lanes` at once, in item order; resolves with the results in that
 * order. A scheduled run over thousands of merchants goes through a few lanes rather than all at once: the
 * shared request budget then takes turns among the lanes' merchants, and one merchant's long backlog holds
 * one lane, not the run. Stops taking new items once `signal` aborts (and rejects with its reason).
 */
export async function runInLanes<T, R>(
  items: readonly T[],
  lanes: number,
  work: (item: T, index: number) => Promise<R>,
  signal?: AbortSignal,
): Promise<R[]> {
  if (!Number.isInteger(lanes) || lanes < 1) throw new RangeError("lanes: expected a whole number above 0");
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      signal?.throwIfAborted();
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
  return results;
}
