import type { Sql, TransactionSql } from "../connection/connect.ts";
import { storedOutcome } from "../event-outcomes/stored-outcome.ts";
import { learnInboxMerchants } from "../merchants/learn-merchants.ts";
import { wakeOrderRefreshers } from "../order-queue/order-queue.ts";
import { queueInboxOrders } from "../order-queue/queue-orders.ts";
import { PROCESS_EVENTS_MAX_ATTEMPTS, payloadField, taskName } from "../tasks.ts";

/** An upstream event envelope (webhook body or GET /events item). Unknown fields are kept. */
export interface EventEnvelope {
  id: string;
  type: string;
  created_at: string;
  merchant_id: string;
  location_id?: string | null;
  connection_id?: string | null;
  origin: { type: string; application_id?: string | null };
  data: Record<string, unknown>;
  [field: string]: unknown;
}

export type EventSource = "webhook" | "catchup" | "cli";

export interface StoreEventsOptions {
  source: EventSource;
  /** Our LOOPS_APPLICATION_ID: events it originated are stored as ignored_self and get no job. */
  applicationId: string | undefined;
  /**
   * Cancels the statement (a Postgres cancel request) when it has not finished after this many ms, so work
   * whose callers were already answered is not committed later. Default: no limit.
   */
  timeoutMs?: number;
  /**
   * The events' JSON texts as they arrived (each the text `events[i]` was parsed from), stored as they are
   * instead of serializing the parsed envelopes again. Default: `JSON.stringify` of each event.
   */
  texts?: readonly string[];
  /**
   * Each event's W3C traceparent (the span that received it, while tracing is on), stored in
   * sync.events.trace_parent so the worker's spans continue its trace. Default: none (null).
   */
  traceParents?: readonly (string | undefined)[];
}

export interface StoreEventsResult {
  /** Ids stored now for the first time (self-originated ones included). */
  inserted: string[];
  /** Ids already in the inbox (or repeated within this batch). */
  duplicates: string[];
  /** Inserted ids marked ignored_self. */
  ignoredSelf: string[];
  /** Ids handed to the worker in this transaction's process_events job. */
  enqueued: string[];
  /**
   * Order events queued straight in sync.order_refresh for the worker's order refresher (when our
   * application id is known, so a self-originated event was already told apart): no job, no hop.
   */
  queued: string[];
}

/**
 * Stores a batch of events in the inbox and hands the new ones to the worker, in ONE statement: order events
 * (when `applicationId` is known) are queued in sync.order_refresh with a NOTIFY, the rest go in one
 * `process_events` job. Either all of it happens or none does, inside the caller's transaction or on its
 * own. The primary
 * key on sync.events.id is the dedupe, so a duplicate (even one arriving concurrently) is inserted and
 * enqueued at most once. One statement is one round trip: the receiver's group commit waits on this.
 */
export async function storeEventsAndEnqueue(
  sql: Sql | TransactionSql,
  events: readonly EventEnvelope[],
  { source, applicationId, timeoutMs, texts, traceParents }: StoreEventsOptions,
): Promise<StoreEventsResult> {
  if (events.length === 0) return { inserted: [], duplicates: [], ignoredSelf: [], enqueued: [], queued: [] };
  if (texts && texts.length !== events.length) {
    throw new Error(`inbox: ${texts.length} event texts for ${events.length} events`);
  }
  const self = applicationId ?? null;
  const initial = storedOutcome(sql, self);
  // The events as ONE JSON array, its columns read out server-side: one string parameter instead of nine
  // arrays (postgres.js escapes every element of a text[], and the envelopes would be serialized again
  // right after being parsed from these very texts). One prepared plan for any
  // batch size. Data-modifying CTEs always run; the job CTE is a SELECT, so the final query references it
  // (evaluated once, as an InitPlan).
  const json = texts ? `[${texts.join(",")}]` : JSON.stringify(events);
  const statement = sql<{ id: string; outcome: string; queued: boolean; jobs: number }[]>`
    with input as (
      select p ->> 'id' as id, p ->> 'type' as type, p ->> 'merchant_id' as merchant_id,
             p ->> 'location_id' as location_id, p ->> 'connection_id' as connection_id,
             p #>> '{origin,type}' as origin_type, p #>> '{origin,application_id}' as origin_application_id,
             (p ->> 'created_at')::timestamptz as created_at, p as payload,
             (${traceParents ? traceParents.map((t) => t ?? null) : null}::text[])[n] as trace_parent
      from jsonb_array_elements(${json}::text::jsonb) with ordinality as e(p, n)
    ),
    stored as (
      insert into sync.events (
        id, type, merchant_id, location_id, connection_id, origin_type, origin_application_id,
        created_at, source, payload, ${initial.columns}, trace_parent
      )
      select id, type, merchant_id, location_id, connection_id, origin_type, origin_application_id,
             created_at, ${source}, payload, ${initial.values}, trace_parent
      from input
      on conflict (id) do nothing
      returning id, outcome, merchant_id, order_id, order_version,
                (outcome = 'pending' and ${self}::text is not null and type like 'order.%'
                 and order_id is not null) as orderly
    ),
    -- Only a merchant that syncs now (active, or first named by catch-up or the CLI: learned active below)
    -- has its order events queued for a fetch. An unconfirmed, unknown or revoked merchant's wait in
    -- process_events like its other events: nothing is fetched before GET /connection confirms it.
    decided as (
      select s.id, s.outcome, s.merchant_id, s.order_id, s.order_version,
             s.orderly and coalesce(m.status = 'active', ${source}::text <> 'webhook') as queued
      from stored s left join sync.merchants m on m.id = s.merchant_id
    ),
    -- Order events go straight to the order refresh queue (apps/worker/src/orders/), woken by NOTIFY.
    refreshing as (${queueInboxOrders(sql)}),
    woken as (${wakeOrderRefreshers(sql)}),
    -- New merchants: unconfirmed when a webhook names them, until GET /connection answers (merchants/).
    learned as (${learnInboxMerchants(sql, source)}),
    -- Asked at once, whatever the events' types.
    confirming as (
      select graphile_worker.add_job(
        ${taskName("confirm_merchant")}::text,
        json_build_object(${payloadField("confirm_merchant", "merchantId")}::text, id),
        job_key => 'confirm:' || id
      )
      from learned where status = 'unconfirmed'
    ),
    job as (
      select graphile_worker.add_job(
        ${taskName("process_events")}::text,
        json_build_object(${payloadField("process_events", "eventIds")}::text, array_agg(id order by id)),
        max_attempts => ${PROCESS_EVENTS_MAX_ATTEMPTS}::int
      ) as added
      from decided
      where outcome = 'pending' and not queued
      having count(*) > 0
    )
    select id, outcome, queued,
           (select count(*)::int from job) + 0 * (select count(*) from woken) + 0 * (select count(*) from confirming)
             as jobs
    from decided`;
  const timer = timeoutMs === undefined ? undefined : setTimeout(() => statement.cancel(), timeoutMs);
  let rows: Awaited<typeof statement>;
  try {
    rows = await statement;
  } finally {
    clearTimeout(timer);
  }

  // In the order the events came (the join to sync.merchants does not keep the insert's order).
  const position = new Map<string, number>();
  for (const [i, e] of events.entries()) if (!position.has(e.id)) position.set(e.id, i);
  rows.sort((a, b) => (position.get(a.id) ?? 0) - (position.get(b.id) ?? 0));
  const inserted = rows.map((r) => r.id);
  const insertedSet = new Set(inserted);
  const ignoredSelf = rows.filter((r) => r.outcome === "ignored_self").map((r) => r.id);
  const enqueued = rows.filter((r) => r.outcome === "pending" && !r.queued).map((r) => r.id);
  const queued = rows.filter((r) => r.queued).map((r) => r.id);
  if (enqueued.length > 0 && rows[0]!.jobs !== 1) {
    throw new Error(
      `inbox: expected one process_events job for ${enqueued.length} new events, got ${rows[0]!.jobs}`,
    );
  }
  const duplicates: string[] = [];
  const seen = new Set<string>();
  for (const e of events) {
    if (!insertedSet.has(e.id) || seen.has(e.id)) duplicates.push(e.id);
    seen.add(e.id);
  }
  return { inserted, duplicates, ignoredSelf, enqueued, queued };
}
