import type { Sql, TransactionSql } from "@loops-sync/db";
import type { Task } from "graphile-worker";
import { applyOrdersIfNewer } from "./applyOrderIfNewer.ts";
import { enqueueJob, type JobSpec, rescheduleJob } from "./enqueueJob.ts";
import { resolveOrderBatchEvents, settleOrderEvents } from "./eventOutcomes.ts";
import { mapWithConcurrency } from "./mapWithConcurrency.ts";
import { pauseMerchant, revokeMerchant } from "./merchantState.ts";
import { checkOrder, InvalidOrderError, type OrderInput } from "./orderInput.ts";
import { orderJobKey } from "./refreshOrder.ts";
import { classifyUpstreamFailure, type UpstreamFailure } from "./upstreamFailure.ts";
import { parseIds, upstreamTask } from "./upstreamTask.ts";
import type { WorkerContext } from "./workerContext.ts";

/** Queue rows one refresh_orders run claims; more left over re-add the job at once. */
export const ORDER_BATCH_ROWS = 500;
/** GET /orders/{id} calls one batch keeps in flight. */
export const ORDER_FETCH_CONCURRENCY = 16;
/** A transiently failed order is retried by its own refresh_order job after this pause. */
const HAND_OFF_DELAY_MS = 1000;

/**
 * Serial refresh queues per merchant. An order always hashes to the same lane, so the events that arrive
 * while its batch is fetching are checked against what that batch wrote (a burst costs one or two fetches);
 * lanes run in parallel, so a merchant's batches pipeline instead of waiting on one another.
 */
export const ORDER_LANES = 8;

/** The lane of an order: FNV-1a of its id, modulo ORDER_LANES. */
export function orderLane(orderId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < orderId.length; i++) {
    hash ^= orderId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % ORDER_LANES;
}

/**
 * The job key, and the graphile-worker named queue, of one lane of a merchant's batch refresh: new events
 * join the waiting job instead of adding one, and the lane's batches run one at a time.
 */
export function ordersJobKey(merchantId: string, lane: number): string {
  return `orders:${merchantId}:${lane}`;
}

/** The refresh_orders job of a lane, as process_events and a full batch add it. */
export function ordersJob(merchantId: string, lane: number): JobSpec<"refresh_orders"> {
  return {
    task: "refresh_orders",
    payload: { merchantId, lane },
    jobKey: ordersJobKey(merchantId, lane),
    queueName: ordersJobKey(merchantId, lane),
    // A lane moved to the end of a 429 pause keeps that time.
    jobKeyMode: "preserve_run_at",
    merchantId,
  };
}

interface Claimed {
  order_id: string;
  /** Newest version the queued events announced; null when one of them did not say. */
  version: number | null;
  replica_version: number | null;
  rows: number;
}

type Fetched =
  | { orderId: string; order: OrderInput }
  | { orderId: string; failure: UpstreamFailure; error: unknown }
  | { orderId: string; skipped: true };

/**
 * refresh_orders: one merchant's queued orders (sync.order_refresh), a batch at a time, in one transaction:
 * claim up to ORDER_BATCH_ROWS rows (`for update skip locked`, should two runs ever overlap), skip the
 * orders the replica already covers, fetch the rest with bounded parallelism, apply them with ONE
 * version-gated upsert and settle their events with ONE update. A crash rolls the claim back. Per order:
 * 404 and malformed answers are recorded as failed; 5xx and timeouts hand the order to its own
 * refresh_order job (backoff, visible attempts); an upstream behind its events likewise. A 429 stops the
 * batch's further calls, re-queues what was not fetched and pauses the merchant; 403 connection_not_active
 * revokes it.
 */
export function refreshOrdersTask(ctx: WorkerContext): Task {
  const { sql, client, metrics, logger } = ctx;
  return upstreamTask(
    {
      name: "refresh_orders",
      parse: (payload) => {
        const p = parseIds<"refresh_orders">(payload);
        const lane = p?.lane ?? 0;
        return p && Number.isInteger(lane) && lane >= 0 && lane < ORDER_LANES ? { ...p, lane } : undefined;
      },
      settle: async ({ merchantId }, outcome, error) => {
        // Only "skipped_revoked" reaches here with rows to drop; a failed batch rolled its claim back, so
        // its orders stay queued for the merchant's next run.
        if (outcome !== "skipped_revoked") return;
        await sql.begin(async (tx) => {
          await tx`delete from sync.order_refresh where merchant_id = ${merchantId}`;
          await tx`
            update sync.events set outcome = ${outcome}, error = ${error ?? null}, outcome_at = now()
            where merchant_id = ${merchantId} and type like 'order.%' and outcome = 'pending'`;
        });
      },
      async run({ merchantId, lane = 0 }, state, helpers) {
        const api = client.forMerchant(merchantId);
        const signal = helpers.abortSignal;
        const more = await sql.begin(async (tx) => {
          const claimed = await claimOrders(tx, merchantId, lane);
          if (claimed.length === 0) return false;
          const needed = claimed.filter(
            (c) => c.version === null || c.replica_version === null || c.replica_version < c.version,
          );
          let stopped: UpstreamFailure | undefined;
          const fetched = await mapWithConcurrency(
            needed,
            ORDER_FETCH_CONCURRENCY,
            async ({ order_id: orderId }): Promise<Fetched> => {
              if (stopped || signal.aborted) return { orderId, skipped: true };
              try {
                const order = await api.orders.get(orderId, { signal });
                const fetchedId = (order as { id?: unknown } | null)?.id;
                if (fetchedId !== orderId) {
                  throw new InvalidOrderError(
                    "id",
                    `asked for ${orderId}, got ${JSON.stringify(fetchedId)}`,
                    orderId,
                  );
                }
                return { orderId, order: checkOrder(order) };
              } catch (error) {
                const failure = classifyUpstreamFailure(error);
                if (failure.kind === "rate_limited" || failure.kind === "revoked") stopped ??= failure;
                return { orderId, failure, error };
              }
            },
          );
          // Shutting down: roll the claim back; upstreamTask hands the job back untouched.
          if (signal.aborted) throw new Error("refresh_orders aborted by shutdown");

          const orders = fetched.flatMap((f) => ("order" in f ? [f.order] : []));
          const applied = await applyOrdersIfNewer(tx, orders);
          for (const a of applied) metrics.orderApplies.inc({ changed: String(a.changed) });
          const before = new Map(applied.map((a) => [a.id, a.previousVersion]));
          const answered = [
            ...claimed
              .filter((c) => !needed.includes(c))
              .map((c) => ({ orderId: c.order_id, versionBefore: c.replica_version })),
            ...orders.map((o) => ({ orderId: o.id, versionBefore: before.get(o.id) ?? null })),
          ];
          await resolveOrderBatchEvents(tx, { merchantId, orders: answered, receivedBefore: state.now });
          // The upstream answered older than the claimed events announced: retry those orders with backoff.
          const after = new Map(applied.map((a) => [a.id, a.version]));
          const behind = needed
            .filter((c) => c.version !== null && after.has(c.order_id) && after.get(c.order_id)! < c.version)
            .map((c) => c.order_id);

          const retry = new Set(behind);
          if (behind.length > 0) {
            logger.info(
              { task: "refresh_orders", merchantId, orders: behind.length },
              "upstream behind its events; handed to refresh_order jobs to retry with backoff",
            );
          }
          const requeue: Claimed[] = [];
          for (const f of fetched) {
            if ("order" in f) continue;
            const claim = needed.find((c) => c.order_id === f.orderId)!;
            if ("skipped" in f) {
              requeue.push(claim);
              continue;
            }
            metrics.upstreamFailures.inc({ kind: f.failure.kind });
            if (f.failure.kind === "rate_limited") requeue.push(claim);
            else if (f.failure.kind === "transient") {
              retry.add(f.orderId);
              logger.warn(
                { task: "refresh_orders", merchantId, orderId: f.orderId, error: String(f.error) },
                "order fetch failed; handed to its own refresh_order job to retry with backoff",
              );
            } else if (f.failure.kind === "permanent") {
              await settleOrderEvents(tx, merchantId, f.orderId, "failed", f.failure.message);
              logger.warn(
                { task: "refresh_orders", merchantId, orderId: f.orderId, error: f.failure.message },
                "upstream refused; recorded as failed",
              );
            }
          }
          if (stopped?.kind === "revoked") {
            await revokeMerchant(tx, merchantId);
            logger.warn(
              { task: "refresh_orders", merchantId },
              "connection not active: merchant marked revoked, no more calls",
            );
            return false;
          }
          // Each order keeps its own backoff and attempts; the rest of the merchant's queue goes on.
          const later = new Date(Date.now() + HAND_OFF_DELAY_MS);
          for (const orderId of [...retry].sort()) {
            await enqueueJob(tx, {
              task: "refresh_order",
              payload: { merchantId, orderId },
              jobKey: orderJobKey(merchantId, orderId),
              jobKeyMode: "preserve_run_at",
              merchantId,
              runAt: later,
            });
          }
          if (requeue.length > 0) await queueOrders(tx, merchantId, requeue);
          if (stopped?.kind === "rate_limited") {
            const until = await pauseMerchant(tx, merchantId, stopped.retryAfterSeconds);
            await rescheduleJob(tx, helpers.job, until);
            logger.warn(
              { task: "refresh_orders", merchantId, until },
              "rate limited by Loops; merchant paused until Retry-After",
            );
            return false;
          }
          return claimed.reduce((n, c) => n + c.rows, 0) >= ORDER_BATCH_ROWS;
        });
        if (more) {
          // This job still holds the key: graphile-worker gives it to a new job, next in the lane's queue.
          await enqueueJob(sql, ordersJob(merchantId, lane));
        }
      },
    },
    ctx,
  );
}

/** The advisory lock that a lane's queue writers hold (shared, to commit) and its batch passes (exclusive). */
const laneLock = (merchantId: string, lane: number) => `orders:${merchantId}:${lane}`;

/**
 * Queues orders for the merchant's batch refresh in the caller's transaction, and returns the lanes that
 * need a refresh_orders job added: not those whose job is already waiting. That is safe because the writer
 * holds a shared advisory lock on the lane until it commits, and a batch, once its job is locked, waits for
 * every such writer (`claimOrders`) before it claims: a writer that saw the job waiting has its rows claimed
 * by it; one that saw it running adds the next job itself.
 */
export async function queueOrderRefresh(
  tx: TransactionSql,
  merchantId: string,
  orders: readonly { order_id: string; version: number | null }[],
): Promise<number[]> {
  const lanes = [...new Set(orders.map((o) => orderLane(o.order_id)))].sort((a, b) => a - b);
  const locks = lanes.map((lane) => laneLock(merchantId, lane));
  // Its own statement: the check below must take its snapshot after the locks are held.
  await tx`
    select pg_advisory_xact_lock_shared(hashtextextended(l, 0))
    from unnest(${locks}::text[]) with ordinality as t(l, n) order by n`;
  await queueOrders(tx, merchantId, orders);
  const rows = await tx<{ lane: number }[]>`
    select t.lane from unnest(${lanes}::int[], ${lanes.map((l) => ordersJobKey(merchantId, l))}::text[])
      as t(lane, key)
    where not exists (select 1 from graphile_worker.jobs j where j.key = t.key and j.locked_at is null)`;
  return rows.map((r) => r.lane);
}

/** Takes up to a batch of the lane's queued rows, one line per order with the replica's version. */
async function claimOrders(tx: TransactionSql, merchantId: string, lane: number): Promise<Claimed[]> {
  // Barrier: wait for the queue writers that may have counted on this job, then let them go on at once.
  const lock = laneLock(merchantId, lane);
  await tx`
    select pg_advisory_unlock(hashtextextended(${lock}, 0))
    from (select pg_advisory_lock(hashtextextended(${lock}, 0))) as locked`;
  return await tx<Claimed[]>`
    with claimed as (
      delete from sync.order_refresh
      where id in (
        select id from sync.order_refresh where merchant_id = ${merchantId} and lane = ${lane}
        order by id limit ${ORDER_BATCH_ROWS} for update skip locked)
      returning order_id, version
    )
    select c.order_id,
           case when bool_or(c.version is null) then null else max(c.version) end as version,
           o.version as replica_version, count(*)::int as rows
    from claimed c left join replica.orders o on o.id = c.order_id
    group by c.order_id, o.version
    order by c.order_id`;
}

/** Appends orders to their lanes of the merchant's queue (new events, or what a 429 stopped a batch from fetching). */
export async function queueOrders(
  sql: Sql | TransactionSql,
  merchantId: string,
  orders: readonly { order_id: string; version: number | null }[],
): Promise<void> {
  await sql`
    insert into sync.order_refresh (merchant_id, order_id, version, lane)
    select ${merchantId}, o.order_id, o.version, o.lane
    from unnest(
      ${orders.map((o) => o.order_id)}::text[],
      ${orders.map((o) => o.version)}::bigint[],
      ${orders.map((o) => orderLane(o.order_id))}::smallint[]
    ) as o(order_id, version, lane)`;
}
