import {
  type ChangeInput,
  type OrderEventsToSettle,
  type QueuedOrder,
  queueOrders,
  recordChanges,
  reopenRevokedMerchant,
  type SettledEvent,
  settleCoveredOrderEvents,
  settleEvents,
  type TransactionSql,
} from "@loops-sync/db";
import {
  enqueueJob,
  type JobSpec,
  type Revocation,
  revocationIsStale,
  revokeMerchant,
} from "@loops-sync/replica";
import type { Task } from "graphile-worker";
import type { WorkerContext } from "../worker-context.ts";
import { brandIdOf, jobIdOf, routeEvent } from "./route-event.ts";

interface StoredEvent {
  id: string;
  type: string;
  merchant_id: string;
  order_id: string | null;
  order_version: number | null;
  origin_application_id: string | null;
  data: unknown;
  merchant_status: string | null;
  /** The connection the event names, the one the merchant's state names, and the mirror's status of the first. */
  connection_id: string | null;
  merchant_connection_id: string | null;
  connection_status: string | null;
  source: "webhook" | "catchup" | "cli";
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
           (e.location_id is not null and l.id is null) as unknown_location, e.connection_id,
           m.connection_id as merchant_connection_id, rc.status as connection_status, e.source
    from sync.events e
    left join sync.merchants m on m.id = e.merchant_id
    left join replica.connections rc on rc.id = e.connection_id
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
  const revocations: { merchantId: string; revocation: Revocation }[] = [];
  // Revoked merchants whose event names another connection: the connection each names, to confirm.
  const reconnecting = new Map<string, string>();
  const later = new Date(Date.now() + COALESCE_MS);
  const want = (key: string, spec: JobSpec) =>
    jobs.set(key, { ...spec, jobKey: key, jobKeyMode: "preserve_run_at" });

  for (const e of events) {
    const merchantId = e.merchant_id;
    const route = routeEvent(e.type);
    if (applicationId && e.origin_application_id === applicationId) {
      outcomes.push({ id: e.id, outcome: "ignored_self" });
    } else if (route === "revocation") {
      // Needs no fetch, so not even a merchant still to be confirmed waits for one. A revocation of a
      // connection the merchant has left (a reconnect came since) revokes that connection's row only.
      const stale = await revocationIsStale(tx, merchantId, e.connection_id);
      if (!stale) revokedNow.add(merchantId);
      revocations.push({
        merchantId,
        revocation: { connectionId: e.connection_id, eventId: e.id, source: e.source },
      });
      outcomes.push({ id: e.id, outcome: stale ? "stale" : "applied" });
    } else if (reconnecting.has(merchantId)) {
      waiting++;
      continue;
    } else if (
      e.merchant_status === "revoked" &&
      !revokedNow.has(merchantId) &&
      isReconnect(e.connection_id, e.merchant_connection_id, e.connection_status)
    ) {
      // A revoked merchant's event names a connection we have not seen revoked: it connected again. Its
      // events wait for GET /connection (confirm_merchant), as a new merchant's do.
      reconnecting.set(merchantId, e.connection_id as string);
      waiting++;
      continue;
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
        outcomes.push({
          id: e.id,
          outcome: "unhandled",
          error: "order event without an order id (data.order_id, data.order.id or data.id)",
        });
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
  const revocationChanges: ChangeInput[] = [];
  for (const { merchantId, revocation } of revocations) {
    revocationChanges.push(...(await revokeMerchant(tx, merchantId, revocation)).changes);
  }
  for (const [merchantId, connectionId] of reconnecting) await startReconnect(tx, merchantId, connectionId);
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
  // Last before COMMIT: it takes the change feed's lock.
  await recordChanges(tx, revocationChanges);
  const settledHere = Object.values(covered.outcomes).reduce((a, b) => a + b, 0);
  const counts: Record<string, number> = {
    ...covered.outcomes,
    dispatched: events.length - outcomes.length - waiting - settledHere,
  };
  for (const o of outcomes) counts[o.outcome] = (counts[o.outcome] ?? 0) + 1;
  return counts;
}

/**
 * Whether a revoked merchant's event names a connection that is neither the revoked one nor one the mirror
 * holds as revoked: the merchant connected again. An event without a connection proves nothing.
 */
function isReconnect(
  connectionId: string | null,
  revokedConnectionId: string | null,
  mirroredStatus: string | null,
): boolean {
  return !!connectionId && connectionId !== revokedConnectionId && mirroredStatus !== "revoked";
}

/**
 * A reconnect: the merchant goes revoked → unconfirmed, naming the new connection (`reopenRevokedMerchant`),
 * and confirm_merchant's GET /connection is asked for. One confirmation per merchant at a time (the inbox's
 * job key).
 */
async function startReconnect(tx: TransactionSql, merchantId: string, connectionId: string): Promise<void> {
  if (!(await reopenRevokedMerchant(tx, merchantId, connectionId))) return;
  await enqueueJob(tx, {
    task: "confirm_merchant",
    payload: { merchantId },
    jobKey: `confirm:${merchantId}`,
  });
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
