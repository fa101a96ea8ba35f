import type { Logger } from "@loops-sync/config";
import type { Sql } from "@loops-sync/db";
import { pausedMerchantFlags } from "@loops-sync/replica";

/** How long the list of paused merchants is reused before asking the database again. */
export const PAUSED_CACHE_MS = 500;

/**
 * graphile-worker's `forbiddenFlags`: the paused merchants' flags, read at most every `cacheMs`. It never
 * rejects: with Postgres away it keeps the last list (empty before the first read). Thrown, the error ended
 * graphile-worker's loop of a pool being replaced, and the process with it (an unhandled rejection). The claim
 * that follows waits for Postgres (queue-pool.ts); a paused merchant's job that slips through is put back by its
 * own state check (upstream/upstream-task.ts).
 */
export function pausedFlagsCache(
  sql: Sql,
  logger: Pick<Logger, "debug">,
  cacheMs = PAUSED_CACHE_MS,
): () => Promise<string[]> {
  let paused: { flags: string[]; at: number } | undefined;
  return async () => {
    if (paused && Date.now() - paused.at <= cacheMs) return paused.flags;
    try {
      paused = { flags: await pausedMerchantFlags(sql), at: Date.now() };
      return paused.flags;
    } catch (error) {
      logger.debug({ error: String(error) }, "could not read the paused merchants; keeping the last list");
      return paused?.flags ?? [];
    }
  };
}
