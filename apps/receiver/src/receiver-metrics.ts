import { type BoundedLabel, boundedLabel, KNOWN_EVENT_TYPES } from "@loops-sync/webhooks";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

export interface ReceiverMetricsOptions {
  /** Where the metrics are registered. Default: a new Registry with Node's default process metrics. */
  registry?: Registry;
  /** Read at scrape time: transactions the receiver holds open (each is one pool connection). */
  connectionsInUse: () => number;
  /** Read at scrape time: the pool's size. */
  connectionsMax: number;
  /** Read at scrape time: events waiting for the next group commit. */
  queued: () => number;
  /** Event types outside the spec's named ones that still get a label value of their own. Default: 20. */
  learnedTypeCap?: number;
}

export interface ReceiverMetrics {
  registry: Registry;
  received: Counter<"type" | "outcome">;
  /** The `type` label for an event type: the spec's types, a few learned ones, then `other`. */
  typeLabel: BoundedLabel;
  unstorable: Counter<"reason">;
  rejected: Counter<"reason">;
  duplicates: Counter;
  ackSeconds: Histogram<"status">;
  inFlight: Gauge;
  batchSize: Histogram;
}

/**
 * The receiver's Prometheus metrics. Labels carry problem codes and a bounded set of event types (senders
 * choose types: see `typeLabel`), never secrets or ids.
 */
export function createReceiverMetrics({
  registry,
  connectionsInUse,
  connectionsMax,
  queued,
  learnedTypeCap = 20,
}: ReceiverMetricsOptions): ReceiverMetrics {
  const register = registry ?? new Registry();
  if (!registry) collectDefaultMetrics({ register });
  const registers = [register];
  new Gauge({
    name: "loops_sync_receiver_db_connections_in_use",
    help: "Pool connections the receiver holds for storing events",
    registers,
    collect() {
      this.set(connectionsInUse());
    },
  });
  new Gauge({
    name: "loops_sync_receiver_db_connections_max",
    help: "Size of the receiver's database pool",
    registers,
    collect() {
      this.set(connectionsMax);
    },
  });
  new Gauge({
    name: "loops_sync_webhook_commit_queue",
    help: "Verified events waiting for the next group commit",
    registers,
    collect() {
      this.set(queued());
    },
  });
  return {
    registry: register,
    received: new Counter({
      name: "loops_sync_webhooks_received_total",
      help:
        "Verified webhooks acknowledged, by event type (the spec's types and the first 20 others seen; the " +
        "rest as other) and outcome (stored, duplicate, ignored_self)",
      labelNames: ["type", "outcome"],
      registers,
    }),
    typeLabel: boundedLabel(KNOWN_EVENT_TYPES, learnedTypeCap),
    unstorable: new Counter({
      name: "loops_sync_webhooks_unstorable_total",
      help:
        "Signed events refused with 422 unstorable_event because they can never be stored, by reason " +
        "(field_too_long, json_too_deep, data_exception, program_limit)",
      labelNames: ["reason"],
      registers,
    }),
    rejected: new Counter({
      name: "loops_sync_webhooks_rejected_total",
      help: "Webhook requests answered with an error, by problem code",
      labelNames: ["reason"],
      registers,
    }),
    duplicates: new Counter({
      name: "loops_sync_webhooks_duplicates_total",
      help: "Webhooks whose event was already stored",
      registers,
    }),
    ackSeconds: new Histogram({
      name: "loops_sync_webhook_ack_seconds",
      help: "Time from request to answer on POST /webhooks/loops, by status",
      labelNames: ["status"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    inFlight: new Gauge({
      name: "loops_sync_webhook_requests_in_flight",
      help: "Webhook requests being handled",
      registers,
    }),
    batchSize: new Histogram({
      name: "loops_sync_webhook_commit_batch_size",
      help: "Events per group-commit transaction",
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
      registers,
    }),
  };
}
