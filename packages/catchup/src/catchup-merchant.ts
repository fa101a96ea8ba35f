import { setTimeout as delay } from "node:timers/promises";
import type { Logger } from "@loops-sync/config";
import { pauseMerchant, type Sql } from "@loops-sync/db";
import type { Event, SyncApi } from "@loops-sync/loops-client";
import {
  classifyUpstreamFailure,
  enterPause,
  type PauseBackoff,
  readMerchantState,
  revokeMerchantAndRecord,
  STALE_REFUSAL,
} from "@loops-sync/replica";
import { withSpan } from "@loops-sync/tracing";
import { readBackfillCheckpoint } from "./backfill-checkpoint.ts";
import { describeError, isCursorRefused } from "./catchup-error.ts";
import { finishCursorRun, readEventCursor, resetEventCursor, startCursorRun } from "./event-cursor.ts";
import { requestCount } from "./request-count.ts";
import { type BackfillResult, runBackfill } from "./run-backfill.ts";
import { LIST_MARGIN_MS, storeEventPage } from "./store-event-page.ts";

export interface CatchupProgress {
  merchantId: string;
  pages: number;
  eventsRead: number;
  eventsStored: number;
  /** created_at of the last event stored, ISO. */
  position: string | undefined;
  /** Share of the time from the cursor (or the first event read) to now already read (0–1), for an ETA. */
  fraction: number;
}

export interface MerchantCatchupOptions {
  sql: Sql;
  client: SyncApi;
  merchantId: string;
  applicationId: string | undefined;
  pageSize: number;
  listThreshold: number;
  initialBackfill: boolean;
  waitWhenPaused: boolean;
  /** How long a scope paused by a refusal of Loops waits between probes. Default: DEFAULT_PAUSE_BACKOFF. */
  pauseBackoff?: PauseBackoff | undefined;
  signal: AbortSignal | undefined;
  onProgress: ((progress: CatchupProgress) => void) | undefined;
  logger: Logger | undefined;
}

export interface MerchantCatchupResult {
  merchantId: string;
  /**
   * ok; cursor_expired (recovered by a backfill); revoked / skipped_revoked (no calls); skipped_paused (a
   * 429's Retry-After still runs, or Loops refused the application or the merchant's grant: calls are paused
   * until a probe is accepted, see `error`); failed (see error; a 429 also pauses the merchant).
   */
  status: "ok" | "cursor_expired" | "revoked" | "skipped_revoked" | "skipped_paused" | "failed";
  pages: number;
  eventsRead: number;
  /** Events new to the inbox (the rest were already received by webhook or an earlier run). */
  eventsStored: number;
  /** Order events settled at once because a list refresh already brought their version. */
  eventsSettled: number;
  /** Events Postgres can never store: recorded in sync.refused_events, and the cursor moved past them. */
  eventsRefused: number;
  /** GET /orders list pages read by the few-calls path, and the orders they changed. */
  listPages: number;
  ordersRefreshed: number;
  /** The backfill run for a new merchant, or after the cursor was refused. */
  backfill: BackfillResult | undefined;
  apiCalls: number;
  error: string | undefined;
  /** Loops refused the application (see classifyUpstreamFailure), not a fault of this run. */
  refused: boolean;
}

/**
 * One merchant's catch-up: GET /events after the stored cursor, each page stored (dedupe by id) with its
 * process_events job and the cursor advanced in ONE transaction. Before a page is stored, when it names at
 * least `listThreshold` orders the replica lacks, those orders are refreshed from GET /orders list pages
 * and their events settled in the same transaction, so the worker makes no per-order call for them.
 */
export function catchupMerchant(options: MerchantCatchupOptions): Promise<MerchantCatchupResult> {
  const attributes = { "loops.merchant.id": options.merchantId };
  return withSpan("catch-up merchant", { attributes }, async (span) => {
    const result = await catchupMerchantPages(options);
    span?.setAttributes({ "loops.catchup.pages": result.pages, "loops.catchup.status": result.status });
    return result;
  });
}

async function catchupMerchantPages(options: MerchantCatchupOptions): Promise<MerchantCatchupResult> {
  const { sql, client, merchantId, applicationId, pageSize, listThreshold, signal, onProgress, logger } =
    options;
  const result: MerchantCatchupResult = {
    merchantId,
    status: "ok",
    pages: 0,
    eventsRead: 0,
    eventsStored: 0,
    eventsSettled: 0,
    eventsRefused: 0,
    listPages: 0,
    ordersRefreshed: 0,
    backfill: undefined,
    apiCalls: 0,
    error: undefined,
    refused: false,
  };
  const callsBefore = requestCount(client);
  let state = await readMerchantState(sql, merchantId);
  // Waiting is bounded: a 429's Retry-After, and a later pause never shortens an earlier one. A refusal's
  // pause lasts until a probe is accepted, which no run should wait for.
  while (state.pausedUntil && !state.refusal && options.waitWhenPaused && state.status !== "revoked") {
    logger?.info(
      { merchantId, pausedUntil: state.pausedUntil },
      "merchant paused by a 429: waiting out its Retry-After",
    );
    await delay(
      Math.max(50, state.pausedUntil.getTime() - state.now.getTime()),
      undefined,
      signal ? { signal } : {},
    );
    state = await readMerchantState(sql, merchantId);
  }
  if (state.status === "revoked") return { ...result, status: "skipped_revoked" };
  // The scheduled task waits for the worker's probe; the operator's command calls anyway (its own probe).
  const overridePause = state.refusal !== null && options.waitWhenPaused;
  if (state.refusal && !overridePause) {
    const error = `calls paused: Loops refused them (${state.refusal}); they resume by themselves`;
    return { ...result, status: "skipped_paused", error, refused: state.refusal !== "scope_not_granted" };
  }
  if (state.pausedUntil && !overridePause) return { ...result, status: "skipped_paused" };
  let cursor = await readEventCursor(sql, merchantId);
  try {
    if (
      !cursor &&
      options.initialBackfill &&
      !(await readBackfillCheckpoint(sql, merchantId))?.lastCompletedAt
    ) {
      // A merchant never synced: its orders older than the 30-day event log only come from the order list.
      result.backfill = await runBackfill({ sql, client, merchantId, signal, logger });
    }
    await startCursorRun(sql, merchantId);
    const api = client.forMerchant(merchantId);
    const attempted = new Set<string>();
    let after = cursor?.afterEventId ?? undefined;
    // Progress is the share of time from here to now; a run from the log's start measures from its first event.
    let from = cursor?.afterCreatedAt?.getTime();
    const listPage = (afterId: string | undefined) =>
      api.events.list({ limit: pageSize, ...(afterId ? { after: afterId } : {}) }, signal ? { signal } : {});
    // The next page is asked for while this one is stored, so the API's answer time hides behind the store.
    let next: Promise<{ data: Event[]; has_more: boolean }> | undefined;
    for (;;) {
      signal?.throwIfAborted();
      let page: { data: Event[]; has_more: boolean };
      try {
        page = await (next ?? listPage(after));
        next = undefined;
      } catch (error) {
        next = undefined;
        const refused = isCursorRefused(classifyUpstreamFailure(error));
        if (!after || !refused || result.status === "cursor_expired") throw error;
        result.status = "cursor_expired";
        const since = cursor?.afterCreatedAt
          ? new Date(cursor.afterCreatedAt.getTime() - LIST_MARGIN_MS)
          : undefined;
        logger?.warn(
          { merchantId, after, since },
          "catch-up cursor refused by Loops (older than the 30-day event retention): backfilling orders, then restarting at the oldest retained event",
        );
        result.backfill = await runBackfill({
          sql,
          client,
          merchantId,
          ...(since ? { since } : {}),
          signal,
          logger,
        });
        await resetEventCursor(sql, merchantId);
        cursor = undefined;
        after = undefined;
        from = undefined;
        continue;
      }
      const last = page.data.at(-1);
      if (!last) break;
      from ??= Date.parse(page.data[0]!.created_at);
      if (page.has_more) {
        next = listPage(last.id);
        // Awaited on the next turn; if storing this page fails first, its outcome no longer matters.
        next.catch(() => {});
      }

      const pageAttributes = { "loops.merchant.id": merchantId, "loops.catchup.events": page.data.length };
      const stored = await withSpan("catch-up page", { attributes: pageAttributes }, () =>
        storeEventPage(
          { sql, api, merchantId, applicationId, listThreshold, attempted, signal, logger },
          page.data,
          last,
        ),
      );
      result.listPages += stored.listPages;
      result.ordersRefreshed += stored.ordersRefreshed;
      result.pages++;
      result.eventsRead += page.data.length;
      result.eventsStored += stored.inserted;
      result.eventsSettled += stored.settled;
      result.eventsRefused += stored.refused;
      onProgress?.({
        merchantId,
        pages: result.pages,
        eventsRead: result.eventsRead,
        eventsStored: result.eventsStored,
        position: last.created_at,
        fraction: page.has_more ? share(from, Date.parse(last.created_at)) : 1,
      });
      if (!page.has_more) break;
      after = last.id;
    }
    await finishCursorRun(
      sql,
      merchantId,
      result.status === "cursor_expired" ? "cursor_expired" : "ok",
      result.status === "cursor_expired"
        ? `the cursor was older than the 30-day event retention; orders were backfilled since ${result.backfill?.since ?? "the beginning"} and the event log re-read from its oldest event`
        : undefined,
    );
  } catch (error) {
    const failure = classifyUpstreamFailure(error);
    // A refusal made under a connection the merchant has left since (it reconnected while this run called)
    // revokes only that connection, and the run failed: the next one goes on under the new connection.
    const stale =
      failure.kind === "revoked" &&
      (await revokeMerchantAndRecord(sql, merchantId, {
        source: "catchup",
        refusedUnder: state.connectionId,
      }));
    if (failure.kind === "revoked" && !stale) {
      await finishCursorRun(
        sql,
        merchantId,
        "revoked",
        "merchant revoked the connection (403 connection_not_active)",
      );
      result.status = "revoked";
    } else if (stale) {
      result.status = "failed";
      result.error = STALE_REFUSAL;
      await finishCursorRun(sql, merchantId, "failed", result.error).catch(() => {});
    } else if (failure.kind === "paused" && !options.waitWhenPaused) {
      // Not this run's fault: the scope pauses and the next run after the probe goes on from the cursor.
      await enterPause(sql, failure, merchantId, options.pauseBackoff).catch(() => {});
      result.status = "skipped_paused";
      result.error = describeError(error);
      result.refused = failure.refused === true;
      await finishCursorRun(sql, merchantId, "paused", result.error).catch(() => {});
      if (signal?.aborted) throw error;
    } else {
      result.status = "failed";
      result.error = describeError(error);
      result.refused = failure.refused === true;
      if (failure.kind === "rate_limited") {
        // Upstream etiquette: every job of this merchant waits out the Retry-After, not only this run.
        await pauseMerchant(sql, merchantId, failure.retryAfterSeconds).catch(() => {});
      }
      await finishCursorRun(sql, merchantId, "failed", result.error).catch(() => {});
      if (signal?.aborted) throw error;
    }
  }
  result.apiCalls = requestCount(client) - callsBefore;
  logger?.info(
    { ...result, backfill: result.backfill ? { pages: result.backfill.pages } : undefined },
    "catch-up done",
  );
  return result;
}

function share(from: number, position: number): number {
  const span = Date.now() - from;
  return span <= 0 ? 0.99 : Math.min(0.99, Math.max(0, (position - from) / span));
}
