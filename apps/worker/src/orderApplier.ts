import { payloadField, pipelinedTransaction, type TransactionSql, taskName } from "@loops-sync/db";
import type { OrderInput } from "@loops-sync/replica";
import {
  type ApplyOrderResult,
  applyOrdersIfNewer,
  DEFAULT_MAX_ATTEMPTS,
  MERCHANT_FLAG_PREFIX,
} from "@loops-sync/replica";
import { settleClaimedEvents } from "./eventOutcomes.ts";
import type { WorkerContext } from "./workerContext.ts";

/** Orders one commit takes at most; the rest go in the next. */
export const APPLY_GROUP_ORDERS = 200;
/**
 * How long a commit waits for a row lock before it gives up: its orders fail (each batch hands them to their
 * own refresh_order jobs and commits, which frees what it holds). A lock held by a transaction that itself
 * waits for one of those batches would otherwise be a deadlock Postgres cannot see: the batch's wait for
 * this commit is in the worker.
 */
export const APPLY_LOCK_TIMEOUT_MS = 2000;
/** SQLSTATE lock_not_available: the lock timeout expired. */
const LOCK_NOT_AVAILABLE = "55P03";
/** An order naming a location the replica lacks asks for a refresh of the merchant's locations this late. */
const LOCATIONS_DELAY_MS = 250;

export interface OrderApplier {
  /**
   * Applies a fetched order (version-gated, {@link applyOrdersIfNewer}) and settles the events that queued
   * it; resolves once that is committed, with what the replica holds now. Orders handed in while a commit
   * runs share the next one (group commit), so an order is readable one commit after its answer arrives,
   * not when the slowest answer of its batch does.
   */
  apply(order: OrderInput, eventIds: readonly string[]): Promise<ApplyOrderResult>;
}

export interface FetchedOrder {
  order: OrderInput;
  /** The events whose queue rows the batch claimed for this order: settled with its apply. */
  eventIds: readonly string[];
}

/**
 * One per worker process, shared by its order batches. Its transactions touch the replica, sync.events
 * and graphile-worker's jobs, never sync.order_refresh nor an advisory lock (what an open batch holds while
 * it waits here), so a batch never waits on a commit that waits on it; a wait for a lock that another
 * transaction holds longer than APPLY_LOCK_TIMEOUT_MS fails the group instead. One commit runs at a time
 * (two at once measured no better: docs/decisions.md), on a pooled connection that the waiting batches
 * must leave free (startWorker sizes both).
 */
export function createOrderApplier(ctx: Pick<WorkerContext, "sql" | "metrics" | "logger">): OrderApplier {
  const { sql, logger } = ctx;
  let queued: (FetchedOrder & { resolve(r: ApplyOrderResult): void; reject(e: unknown): void })[] = [];
  let running = false;

  // Two round trips: BEGIN, the lock timeout and the apply go out together; the settle, the locations
  // check and COMMIT go out together once the apply has answered (docs/decisions.md, "The applier's commit
  // in two round trips").
  const commit = (group: readonly FetchedOrder[]) =>
    pipelinedTransaction(sql, async (tx) => {
      const timeout = tx`select set_config('lock_timeout', ${`${APPLY_LOCK_TIMEOUT_MS}ms`}, true)`.execute();
      // Handled at once: if the connection breaks, the apply's failure is what is reported (no tail then).
      timeout.catch(() => {});
      const sent = await sendFetchedOrders(tx, group);
      return { result: sent, tail: [timeout, ...sent.tail] };
    }).then(async (sent) => {
      const done = { applied: sent.applied, outcomes: await sent.outcomes };
      countApplied(ctx, done);
      return done.applied;
    });

  async function run(group: typeof queued): Promise<void> {
    try {
      const results = await commit(group);
      for (const [i, e] of group.entries()) e.resolve(results[i]!);
    } catch (error) {
      if (group.length === 1 || (error as { code?: string }).code === LOCK_NOT_AVAILABLE) {
        if (group.length > 1) {
          logger.warn(
            { orders: group.length, error: String(error) },
            "a commit of fetched orders waited too long for a lock; each is retried by its own job",
          );
        }
        for (const e of group) e.reject(error);
        return;
      }
      // One order the database refuses must not fail its neighbours' batches: each alone, once.
      logger.warn(
        { orders: group.length, error: String(error) },
        "applying a group of orders failed; applying them one by one",
      );
      for (const e of group) {
        await commit([e]).then(
          ([result]) => e.resolve(result!),
          (alone: unknown) => e.reject(alone),
        );
      }
    }
  }

  function start(): void {
    if (running || queued.length === 0) return;
    const group = queued.slice(0, APPLY_GROUP_ORDERS);
    queued = queued.slice(group.length);
    running = true;
    void run(group).finally(() => {
      running = false;
      start();
    });
  }

  return {
    apply(order, eventIds) {
      return new Promise<ApplyOrderResult>((resolve, reject) => {
        queued.push({ order, eventIds, resolve, reject });
        start();
      });
    },
  };
}

export interface AppliedGroup {
  /** One per fetched order, in order. */
  applied: ApplyOrderResult[];
  /** The group's settled events, by outcome. */
  outcomes: Record<string, number>;
}

/**
 * In the caller's transaction: applies the fetched orders with ONE version-gated upsert, settles their
 * claimed events with ONE update (against the version stored before: `stale` or `applied`), and asks for a
 * locations refresh where an order names a location the replica lacks.
 */
export async function applyFetchedOrders(
  tx: TransactionSql,
  group: readonly FetchedOrder[],
): Promise<AppliedGroup> {
  const sent = await sendFetchedOrders(tx, group);
  await Promise.all(sent.tail);
  return { applied: sent.applied, outcomes: await sent.outcomes };
}

interface SentGroup {
  applied: ApplyOrderResult[];
  /** The settle's count by outcome, once it has answered. */
  outcomes: Promise<Record<string, number>>;
  /** The statements sent after the apply and not waited for: the settle and the locations check. */
  tail: Promise<unknown>[];
}

/**
 * {@link applyFetchedOrders} up to the apply's answer: the settle and the locations check are sent (neither
 * reads what the other writes) but not waited for, so they can travel with the COMMIT.
 */
async function sendFetchedOrders(tx: TransactionSql, group: readonly FetchedOrder[]): Promise<SentGroup> {
  if (group.length === 0) return { applied: [], outcomes: Promise.resolve({}), tail: [] };
  const results = await applyOrdersIfNewer(
    tx,
    group.map((e) => e.order),
    group.map((e) => ({ eventIds: e.eventIds })),
  );
  const byId = new Map(results.map((a) => [a.id, a]));
  const applied = group.map((e) => byId.get(e.order.id)!);
  const outcomes = settleClaimedEvents(
    tx,
    group.map((e, i) => ({ claim: { event_ids: e.eventIds }, versionBefore: applied[i]!.previousVersion })),
  );
  const locations = refreshUnknownLocations(
    tx,
    results.filter((a) => a.changed).map((a) => a.id),
  );
  return { applied, outcomes, tail: [outcomes, locations] };
}

/** Counts a committed group in the worker's metrics. */
export function countApplied({ metrics }: Pick<WorkerContext, "metrics">, group: AppliedGroup): void {
  for (const a of group.applied) metrics.orderApplies.inc({ changed: String(a.changed) });
  for (const [outcome, n] of Object.entries(group.outcomes)) metrics.events.inc({ outcome }, n);
}

/**
 * Orders that name a location the replica lacks: one statement adds a refresh of their merchants' locations
 * and channel connections (a `refresh_locations` job per merchant, keyed so a burst of such orders asks
 * once, in merchant order so two commits take the job keys in the same order). The job `enqueueJob` would
 * add, built in SQL because the merchants are found there: one statement can travel with the COMMIT.
 */
function refreshUnknownLocations(tx: TransactionSql, orderIds: readonly string[]): Promise<unknown> {
  if (orderIds.length === 0) return Promise.resolve();
  const runAt = new Date(Date.now() + LOCATIONS_DELAY_MS);
  return tx`
    select graphile_worker.add_job(
      ${taskName("refresh_locations")}::text,
      json_build_object(${payloadField("refresh_locations", "merchantId")}::text, m.merchant_id),
      run_at => ${runAt}::timestamptz,
      max_attempts => ${DEFAULT_MAX_ATTEMPTS},
      job_key => 'locations:' || m.merchant_id,
      flags => array[${MERCHANT_FLAG_PREFIX} || m.merchant_id],
      job_key_mode => 'preserve_run_at'
    )
    from (
      select distinct o.merchant_id from replica.orders o
      where o.id = any(${orderIds as string[]}::text[]) and o.location_id is not null
        and not exists (select 1 from replica.locations l where l.id = o.location_id)
      order by 1
    ) m`.execute();
}
