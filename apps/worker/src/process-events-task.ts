import {
  type OrderEventsToSettle,
  type SettledEvent,
  settleCoveredOrderEvents,
  settleEvents,
  type TransactionSql,
} from "@loops-sync/db";
import { enqueueJob, type JobSpec, revokeMerchant } from "@loops-sync/replica";
import type { Task } from "graphile-worker";
import { type QueuedOrder, queueOrders } from "./orders/claim-orders.ts";
import { brandIdOf, jobIdOf, routeEvent } from "./route-event.ts";
import type { WorkerContext } from "./worker-context.ts";

interface StoredEvent {
  id: string;
  type: string;
  merchant_id: string;
  order_id: string | null;
  order_version: number | null;
  origin_application_id: string | null;
  data: unknown;
  merchant_status: string | null;
  replica_version: number | null;
  unknown_location: boolean;
}

/**
 * How long a refresh of locations or the merchant waits for more events of the same burst to join it
 * (job_key, preserve_run_at). Orders need no window: they queue in sync.order_refresh and a batch takes
 * whatever has queued by the time it runs.
 */
const COALESCE_MS = 250;

/**
 * process_events: dispatches stored events by type, in one transaction that records outcomes and adds the
 * refresh jobs together. It never calls upstream itself: calls live in jobs flagged per merchant, so a
 * 429 pause or a revocation applies to them. Order events the replica already covers are settled at once
 * (by the one coverage rule, settleCoveredOrderEvents: `stale`); the rest are queued in sync.order_refresh,
 * where the worker's order refresher fetches them in batches.
 * Events named here are only those still pending, so running the same job twice (after a crash) does
 * nothing new.
 */
export function processEventsTask(ctx: WorkerContext): Task {
  const { sql, logger, metrics, applicationId } = ctx;
  return async function processEvents(rawPayload, helpers) {
    const eventIds = (rawPayload as { eventIds?: unknown } | null)?.eventIds;
    if (!Array.isArray(eventIds) || !eventIds.every((id) => typeof id === "string")) {
      logger.error(
        { jobId: helpers.job.id },
        "process_events payload has no eventIds array; dropping the job",
      );
      return;
    }
    const stop = metrics.jobSeconds.startTimer({ task: "process_events" });
    const counts = await sql.begin((tx) => dispatch(tx, eventIds as string[], applicationId));
    for (const [outcome, n] of Object.entries(counts)) metrics.events.inc({ outcome }, n);
    metrics.jobs.inc({ task: "process_events", result: "success" });
    stop();
  };
}

async function dispatch(
  tx: TransactionSql,
  eventIds: string[],
  applicationId: string | undefined,
): Promise<Record<string, number>> {
  const events = await tx<StoredEvent[]>`
    select e.id, e.type, e.merchant_id, e.order_id, e.order_version, e.origin_application_id,
           e.payload -> 'data' as data, m.status as merchant_status, o.version as replica_version,
           (e.location_id is not null and l.id is null) as unknown_location
    from sync.events e
    left join sync.merchants m on m.id = e.merchant_id
    left join replica.orders o on o.id = e.order_id
    left join replica.locations l on l.id = e.location_id
    where e.id = any(${eventIds}::text[]) and e.outcome = 'pending'
    order by e.created_at, e.id`;

  const outcomes: SettledEvent[] = [];
  let waiting = 0;
  // Order events to fetch unless the replica covers them already (judged by settleCoveredOrderEvents).
  const orderEvents: { merchantId: string; row: QueuedOrder; replicaVersion: number | null }[] = [];
  const jobs = new Map<string, JobSpec>();
  const revokedNow = new Set<string>();
  const later = new Date(Date.now() + COALESCE_MS);
  const want = (key: string, spec: JobSpec) =>
    jobs.set(key, { ...spec, jobKey: key, jobKeyMode: "preserve_run_at" });

  for (const e of events) {
    const merchantId = e.merchant_id;
    const route = routeEvent(e.type);
    if (applicationId && e.origin_application_id === applicationId) {
      outcomes.push({ id: e.id, outcome: "ignored_self" });
    } else if (route === "revocation") {
      // Needs no fetch, so not even a merchant still to be confirmed waits for one.
      revokedNow.add(merchantId);
      outcomes.push({ id: e.id, outcome: "applied" });
    } else if (e.merchant_status === "unknown") {
      outcomes.push({ id: e.id, outcome: "unhandled", error: "merchant unknown to Loops (GET /connection)" });
    } else if (e.merchant_status === "unconfirmed") {
      // Learned from a webhook: nothing is fetched for it until GET /connection confirms it. The inbox added
      // the confirm_merchant job when it learned the merchant; that job dispatches these events again.
      waiting++;
      continue;
    } else if (e.merchant_status === "revoked" || revokedNow.has(merchantId)) {
      outcomes.push({ id: e.id, outcome: "skipped_revoked" });
    } else if (route === "order") {
      if (!e.order_id) {
        outcomes.push({ id: e.id, outcome: "unhandled", error: "order event without data.order_id" });
      } else {
        orderEvents.push({
          merchantId,
          row: { order_id: e.order_id, version: e.order_version, event_id: e.id },
          replicaVersion: e.replica_version,
        });
      }
    } else if (route === "job") {
      const jobId = jobIdOf(e.data);
      if (!jobId) outcomes.push({ id: e.id, outcome: "unhandled", error: "job.completed without a job id" });
      else
        want(`job:${merchantId}:${jobId}`, {
          task: "refresh_job",
          payload: { merchantId, jobId },
          merchantId,
        });
    } else if (route === "go_live") {
      want(`golive:${merchantId}`, { task: "refresh_go_live", payload: { merchantId }, merchantId });
    } else if (route === "brand") {
      const brandId = brandIdOf(e.type, e.data);
      if (!brandId) outcomes.push({ id: e.id, outcome: "unhandled", error: `${e.type} without a brand id` });
      else
        want(`brand:${merchantId}:${brandId}`, {
          task: "refresh_brand",
          payload: { merchantId, brandId },
          merchantId,
          runAt: later,
        });
    } else if (route === "merchant") {
      want(`merchant:${merchantId}`, {
        task: "refresh_merchant",
        payload: { merchantId },
        merchantId,
        runAt: later,
      });
    } else if (route === "locations") {
      want(`locations:${merchantId}`, {
        task: "refresh_locations",
        payload: { merchantId },
        merchantId,
        runAt: later,
      });
    } else {
      outcomes.push({ id: e.id, outcome: "unhandled" });
    }
    if (
      e.unknown_location &&
      route !== "revocation" &&
      e.merchant_status !== "revoked" &&
      !revokedNow.has(merchantId)
    ) {
      // An event names a location the replica lacks: refresh the merchant's locations and channel connections.
      want(`locations:${merchantId}`, {
        task: "refresh_locations",
        payload: { merchantId },
        merchantId,
        runAt: later,
      });
    }
  }

  await settleEvents(tx, outcomes);
  const covered = await settleCovered(tx, orderEvents);
  for (const merchantId of revokedNow) await revokeMerchant(tx, merchantId);
  const queued = new Map<string, QueuedOrder[]>();
  for (const { merchantId, row } of orderEvents) {
    if (covered.settled.has(row.event_id) || revokedNow.has(merchantId)) continue;
    const rows = queued.get(merchantId) ?? [];
    rows.push(row);
    queued.set(merchantId, rows);
  }
  // The worker's order refresher takes them from here (woken by the NOTIFY at commit).
  for (const [merchantId, rows] of queued) await queueOrders(tx, merchantId, rows);
  // Keys in one global order: concurrent process_events transactions adding the same new keys (a merchant's
  // locations, a busy order) otherwise wait on each other's unique-index entries in a cycle (40P01).
  for (const [key, spec] of [...jobs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (spec.merchantId && revokedNow.has(spec.merchantId)) continue;
    await enqueueJob(tx, { ...spec, jobKey: key });
  }
  const settledHere = Object.values(covered.outcomes).reduce((a, b) => a + b, 0);
  const counts: Record<string, number> = {
    ...covered.outcomes,
    dispatched: events.length - outcomes.length - waiting - settledHere,
  };
  for (const o of outcomes) counts[o.outcome] = (counts[o.outcome] ?? 0) + 1;
  return counts;
}

/**
 * Settles the order events the replica already covers, by the one coverage rule (settleCoveredOrderEvents):
 * nothing is written here, so the version "before" is the replica's as read with the events, and an event
 * it covered then is `stale` (one covered only by a write committed since then is `applied`). No fetch
 * started for them, so an event without a version is not covered. Returns the outcomes, and the events no
 * longer pending (read back only when it settled some): only the rest are queued.
 */
async function settleCovered(
  tx: TransactionSql,
  orderEvents: readonly { row: QueuedOrder; replicaVersion: number | null }[],
): Promise<{ outcomes: Record<string, number>; settled: Set<string> }> {
  const events: OrderEventsToSettle["events"] = orderEvents.map(({ row, replicaVersion }) => ({
    eventId: row.event_id,
    versionBefore: replicaVersion,
    receivedBefore: null,
  }));
  const outcomes = await settleCoveredOrderEvents(tx, { events });
  if (Object.keys(outcomes).length === 0) return { outcomes, settled: new Set() };
  const open = await tx<{ id: string }[]>`
    select id from sync.events where id = any(${orderEvents.map((o) => o.row.event_id)}::text[])
      and outcome = 'pending'`;
  const stillOpen = new Set(open.map((r) => r.id));
  return {
    outcomes,
    settled: new Set(orderEvents.map((o) => o.row.event_id).filter((id) => !stillOpen.has(id))),
  };
}
