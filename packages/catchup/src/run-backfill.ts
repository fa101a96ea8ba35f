import type { Logger } from "@loops-sync/config";
import { recordChanges, type Sql } from "@loops-sync/db";
import type { SyncApi } from "@loops-sync/loops-client";
import {
  classifyUpstreamFailure,
  readMerchantState,
  revokeMerchantAndRecord,
  STALE_REFUSAL,
} from "@loops-sync/replica";
import { applyOrderPage } from "./apply-order-page.ts";
import {
  advanceBackfillRun,
  completeBackfillRun,
  failBackfillRun,
  readBackfillCheckpoint,
  startBackfillRun,
} from "./backfill-checkpoint.ts";
import { backfillCoverage, countReplicaOrders } from "./backfill-coverage.ts";
import { catchupError, describeError, isFieldRefused } from "./catchup-error.ts";
import { requestCount } from "./request-count.ts";

/** How far below the newest updated_at of the first page the next watermark is set. */
export const WATERMARK_MARGIN_MS = 5 * 60_000;

export interface BackfillProgress {
  merchantId: string;
  pages: number;
  ordersSeen: number;
  ordersChanged: number;
  /** Share of the time span from `since` to the newest update already listed (0–1); undefined without `since`. */
  fraction: number | undefined;
}

export interface RunBackfillOptions {
  sql: Sql;
  client: SyncApi;
  merchantId: string;
  /** List orders updated at or after this. Default: the watermark of the last completed run, else all history. */
  since?: Date | string;
  /** Orders per page (1–100). Default: 100. */
  pageSize?: number;
  /** Called after each applied page. Default: none. */
  onProgress?: (progress: BackfillProgress) => void;
  /** Cancels between calls; the checkpoint keeps what was done. Default: none. */
  signal?: AbortSignal;
  /** Default: none. */
  logger?: Logger;
}

export interface BackfillResult {
  merchantId: string;
  /** updated_since of this run (ISO), null for all history. */
  since: string | null;
  /** True when this call continued an interrupted run from its checkpoint. */
  resumed: boolean;
  pages: number;
  ordersSeen: number;
  ordersChanged: number;
  /** Orders the replica could not store as they are (logged with why). */
  ordersInvalid: number;
  /** Where the next run will start (ISO), null when nothing was ever listed. */
  watermark: string | null;
  /** API requests this run made, retries included (0 when the client keeps no stats). */
  apiCalls: number;
}

/**
 * Backfill of a merchant's orders: GET /orders?updated_since=<watermark>, newest update first, each page
 * applied through the version gate and the checkpoint advanced in the same transaction, so an interrupted
 * run resumes at the next page. The next watermark is the newest updated_at on the first page minus
 * WATERMARK_MARGIN_MS: an order updated while we page moves in front of our cursor (newest first) and is
 * missed by this run, but its new updated_at is later than anything on the first page, so the next run
 * lists it. Upstream timestamps are used, never our clock, so clock skew cannot open a gap; the margin
 * covers updates committed a little after the time they carry.
 */
export async function runBackfill({
  sql,
  client,
  merchantId,
  since,
  pageSize = 100,
  onProgress,
  signal,
  logger,
}: RunBackfillOptions): Promise<BackfillResult> {
  const state = await readMerchantState(sql, merchantId);
  if (state.status === "revoked") {
    throw catchupError(
      "merchant_inactive",
      merchantId,
      `merchant ${merchantId} is revoked: no API calls are made for it (see docs/runbook.md, "A merchant revoked the connection")`,
    );
  }
  const callsBefore = requestCount(client);
  const wanted = since === undefined ? undefined : new Date(since);
  const checkpoint = await readBackfillCheckpoint(sql, merchantId);
  const interrupted = checkpoint?.run;
  const resumed =
    interrupted !== undefined &&
    interrupted.pageCursor !== null &&
    (wanted === undefined || interrupted.since?.getTime() === wanted.getTime());
  const runSince = resumed ? interrupted.since : (wanted ?? checkpoint?.watermark ?? null);
  if (!resumed) await startBackfillRun(sql, merchantId, runSince);

  const totals = {
    pages: resumed ? interrupted.pages : 0,
    seen: resumed ? interrupted.ordersSeen : 0,
    changed: resumed ? interrupted.ordersChanged : 0,
    invalid: 0,
  };
  let cursor = resumed ? (interrupted.pageCursor ?? undefined) : undefined;
  let newest =
    resumed && interrupted.nextWatermark
      ? interrupted.nextWatermark.getTime() + WATERMARK_MARGIN_MS
      : undefined;
  const api = client.forMerchant(merchantId);
  const expected = onProgress ? await countReplicaOrders(sql, merchantId, runSince) : 0;
  try {
    for (;;) {
      signal?.throwIfAborted();
      const query = {
        limit: pageSize,
        ...(runSince ? { updated_since: runSince.toISOString() } : {}),
        ...(cursor ? { cursor } : {}),
      };
      const page = await api.orders.list(query, signal ? { signal } : {}).catch(async (error: unknown) => {
        // A stored page cursor upstream no longer accepts: start the run over (the pages are idempotent).
        if (!cursor || !isFieldRefused(classifyUpstreamFailure(error), "cursor")) throw error;
        logger?.warn(
          { merchantId },
          "backfill: the checkpoint's page cursor was refused; starting the run over",
        );
        await startBackfillRun(sql, merchantId, runSince);
        Object.assign(totals, { pages: 0, seen: 0, changed: 0 });
        cursor = undefined;
        newest = undefined;
        const { cursor: _dropped, ...fresh } = query;
        return api.orders.list(fresh, signal ? { signal } : {});
      });
      const first = page.data[0];
      if (newest === undefined && first) newest = Date.parse(first.updated_at);
      const oldest = page.data.at(-1);
      const applied = await sql.begin(async (tx) => {
        const result = await applyOrderPage(tx, [...page.data, ...page.rejected.map((r) => r.item)], {
          source: "backfill",
        });
        await advanceBackfillRun(tx, merchantId, {
          nextCursor: page.next_cursor,
          nextWatermark: newest === undefined ? null : new Date(newest - WATERMARK_MARGIN_MS),
          seen: page.data.length,
          changed: result.changed.length,
        });
        await recordChanges(tx, result.changes);
        return result;
      });
      for (const bad of applied.invalid) {
        logger?.warn({ merchantId, orderId: bad.orderId, reason: bad.reason }, "backfill: order not stored");
      }
      totals.pages++;
      totals.seen += page.data.length;
      totals.changed += applied.changed.length;
      totals.invalid += applied.invalid.length;
      onProgress?.({
        merchantId,
        pages: totals.pages,
        ordersSeen: totals.seen,
        ordersChanged: totals.changed,
        fraction: backfillCoverage({
          since: runSince,
          newest,
          oldestListed: oldest ? Date.parse(oldest.updated_at) : undefined,
          nextCursor: page.next_cursor,
          seen: totals.seen,
          expected,
        }),
      });
      if (!page.next_cursor) break;
      cursor = page.next_cursor;
    }
  } catch (error) {
    const revoked = classifyUpstreamFailure(error).kind === "revoked";
    // Refused under a connection the merchant has left since: only that connection is revoked, and the run
    // failed (the next one goes on under the new connection).
    if (
      revoked &&
      (await revokeMerchantAndRecord(sql, merchantId, {
        source: "backfill",
        refusedUnder: state.connectionId,
      }))
    ) {
      await failBackfillRun(sql, merchantId, STALE_REFUSAL);
      throw error;
    }
    if (revoked) {
      await failBackfillRun(sql, merchantId, "merchant revoked the connection (403 connection_not_active)");
      throw catchupError("merchant_revoked", merchantId, `merchant ${merchantId} revoked the connection`, {
        cause: error,
      });
    }
    await failBackfillRun(sql, merchantId, describeError(error));
    throw error;
  }
  const watermark = await completeBackfillRun(sql, merchantId);
  logger?.info({ merchantId, ...totals, watermark }, "backfill complete");
  return {
    merchantId,
    since: runSince?.toISOString() ?? null,
    resumed,
    pages: totals.pages,
    ordersSeen: totals.seen,
    ordersChanged: totals.changed,
    ordersInvalid: totals.invalid,
    watermark: watermark?.toISOString() ?? null,
    apiCalls: requestCount(client) - callsBefore,
  };
}
