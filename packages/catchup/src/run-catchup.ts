import type { Logger } from "@loops-sync/config";
import type { Sql } from "@loops-sync/db";
import type { SyncApi } from "@loops-sync/loops-client";
import { type PauseBackoff, runInLanes } from "@loops-sync/replica";
import { type CatchupProgress, catchupMerchant, type MerchantCatchupResult } from "./catchup-merchant.ts";
import { listActiveMerchants } from "./list-active-merchants.ts";
import { requestCount } from "./request-count.ts";

export interface RunCatchupOptions {
  sql: Sql;
  client: SyncApi;
  /** LOOPS_APPLICATION_ID: events we originated are stored as ignored_self. Default: none. */
  applicationId?: string | undefined;
  /** Configured merchants (LOOPS_MERCHANT_IDS), synced with every active merchant in sync.merchants. Default: []. */
  merchantIds?: readonly string[];
  /** Only this merchant (even one not yet known). Default: every active merchant. */
  merchantId?: string | undefined;
  /** Only these merchants (a start's due ones). Default: every active merchant. */
  merchants?: readonly string[] | undefined;
  /** Events per GET /events page (1–100). Default: 100. */
  pageSize?: number;
  /**
   * A page naming at least this many orders the replica lacks refreshes them from GET /orders list pages
   * instead of one GET /orders/{id} each. Default: 2 (one order costs one call either way).
   */
  listThreshold?: number;
  /** A merchant never caught up is first backfilled from the order list (history past 30 days). Default: true. */
  initialBackfill?: boolean;
  /**
   * A merchant paused by a 429 (its Retry-After still running): wait the pause out, then catch it up (the
   * operator's command), instead of skipping it until the next run (the scheduled task). Default: false.
   */
  waitWhenPaused?: boolean;
  /**
   * Merchants caught up at once. The shared request budget takes turns among them, so one merchant's long
   * backlog holds one lane, not the run. Default: 8.
   */
  concurrency?: number;
  /** How long a scope paused by a refusal of Loops waits between probes. Default: DEFAULT_PAUSE_BACKOFF. */
  pauseBackoff?: PauseBackoff;
  /** Called after each stored page. Default: none. */
  onProgress?: (progress: CatchupProgress) => void;
  /** Called when a merchant's run ended, whatever its outcome. Default: none. */
  onMerchantDone?: (result: MerchantCatchupResult) => void;
  /** Cancels between calls; the cursor keeps what was stored. Default: none. */
  signal?: AbortSignal;
  /** Default: none. */
  logger?: Logger;
}

export interface CatchupResult {
  merchants: MerchantCatchupResult[];
  eventsRead: number;
  eventsStored: number;
  /** API requests of the whole run, retries included (0 when the client keeps no stats). */
  apiCalls: number;
  /** apiCalls / eventsStored: what catching up one missed event cost (null when none was missed). */
  callsPerStoredEvent: number | null;
  /** Merchants whose run failed (their cursor keeps the progress made). */
  failed: string[];
}

/**
 * Catches up every active merchant (or one) from the event log, a few merchants at once (`concurrency`);
 * the request budget (LOOPS_MAX_RPS) paces them and a 429 narrows it for everyone. A failing merchant is
 * recorded and the others still run.
 */
export async function runCatchup({
  sql,
  client,
  applicationId,
  merchantIds = [],
  merchantId,
  merchants: only,
  pageSize = 100,
  listThreshold = 2,
  initialBackfill = true,
  waitWhenPaused = false,
  concurrency = 8,
  pauseBackoff,
  onProgress,
  onMerchantDone,
  signal,
  logger,
}: RunCatchupOptions): Promise<CatchupResult> {
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100) {
    throw new RangeError(`runCatchup: pageSize must be a whole number from 1 to 100, got ${pageSize}`);
  }
  const callsBefore = requestCount(client);
  const merchants = merchantId ? [merchantId] : (only ?? (await listActiveMerchants(sql, merchantIds)));
  const results = await runInLanes(
    merchants,
    concurrency,
    async (id) => {
      const result = await catchupMerchant({
        sql,
        client,
        merchantId: id,
        applicationId,
        pageSize,
        listThreshold,
        initialBackfill,
        waitWhenPaused,
        pauseBackoff,
        signal,
        onProgress,
        logger,
      });
      onMerchantDone?.(result);
      return result;
    },
    signal,
  );
  const eventsStored = results.reduce((n, r) => n + r.eventsStored, 0);
  const apiCalls = requestCount(client) - callsBefore;
  return {
    merchants: results,
    eventsRead: results.reduce((n, r) => n + r.eventsRead, 0),
    eventsStored,
    apiCalls,
    callsPerStoredEvent: eventsStored > 0 ? apiCalls / eventsStored : null,
    failed: results.filter((r) => r.status === "failed").map((r) => r.merchantId),
  };
}
