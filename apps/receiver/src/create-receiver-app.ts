import type { Logger } from "@loops-sync/config";
import type { Sql } from "@loops-sync/db";
import { createWebhookVerifier, DEFAULT_MAX_ID_LENGTH, DEFAULT_MAX_JSON_DEPTH } from "@loops-sync/webhooks";
import { Hono } from "hono";
import { pino } from "pino";
import type { Registry } from "prom-client";
import { createEventStore, type EventStore } from "./event-store.ts";
import { mountHealthRoutes } from "./health-routes.ts";
import { problemResponse } from "./problem-response.ts";
import type { ReceiverEnv } from "./receiver-env.ts";
import { createReceiverMetrics, type ReceiverMetrics } from "./receiver-metrics.ts";
import { createWebhookHandler } from "./webhook-handler.ts";

export type ReceiverApp = Hono<ReceiverEnv>;

export interface ReceiverAppOptions {
  /** The pool events are stored through. The caller owns it (and ends it). */
  sql: Sql;
  /** Every accepted whsec_… secret (rotation: old and new). At least one. */
  webhookSecrets: readonly string[];
  /** Our LOOPS_APPLICATION_ID: events we caused are stored as ignored_self, without a job. Default: none. */
  applicationId?: string;
  /** Accepted age of webhook-timestamp, either way. Default: 300. */
  toleranceSeconds?: number;
  /** Largest body accepted; larger ones get 413 without being read. Default: 262144 (256 KiB). */
  maxBodyBytes?: number;
  /** Longest `id`, `type`, `merchant_id`, `location_id`, `connection_id`; longer get 422. Default: 255. */
  maxIdLength?: number;
  /** Deepest nesting of arrays and objects in a body; deeper get 422. Default: 64. */
  maxJsonDepth?: number;
  /** Default: a silent logger. */
  logger?: Logger;
  /** Where metrics are registered (served by the admin listener, never on this one). Default: a new Registry with Node's process metrics. */
  registry?: Registry;
  /**
   * Why the whole process should be restarted (e.g. its worker runner stopped), or undefined: /healthz and
   * /readyz answer 503 with it. Default: always alive.
   */
  liveness?: () => { code: string; detail: string } | undefined;
  /**
   * Longest wait for a commit before 503: an event still queued then is not sent, a statement still running
   * then is cancelled (so a 503 always means "not stored"). Default: 5000 ms.
   */
  storeTimeoutMs?: number;
  /** Retry-After on 503 answers, in seconds. Default: 5. */
  retryAfterSeconds?: number;
  /** Most events per group-commit transaction. Default: 1000. */
  maxBatchSize?: number;
  /**
   * Group-commit transactions at once (pool connections used). Default: 1: one commit in flight gathers the
   * requests that arrive meanwhile into the next, so batches are larger and each event costs less (on two
   * cores shared with Postgres a second commit at once bought nothing: docs/decisions.md, "Group commit").
   */
  maxConcurrentCommits?: number;
}

export interface Receiver {
  app: ReceiverApp;
  store: EventStore;
  metrics: ReceiverMetrics;
  /** Requests being handled on any route. */
  inFlight(): number;
  /** Marks shutdown: /readyz turns 503 and answers carry Connection: close. */
  drain(): void;
}

const allow = (methods: string) => () =>
  problemResponse({
    status: 405,
    code: "method_not_allowed",
    title: "Method not allowed",
    detail: `use ${methods}`,
    headers: { allow: methods },
  });

/** The receiver and its parts; startReceiver uses the parts for a graceful shutdown. */
export function createReceiver({
  sql,
  webhookSecrets,
  applicationId,
  toleranceSeconds = 300,
  maxBodyBytes = 262_144,
  maxIdLength = DEFAULT_MAX_ID_LENGTH,
  maxJsonDepth = DEFAULT_MAX_JSON_DEPTH,
  logger = pino({ level: "silent" }),
  registry,
  liveness = () => undefined,
  storeTimeoutMs = 5000,
  retryAfterSeconds = 5,
  maxBatchSize = 1000,
  maxConcurrentCommits = 1,
}: ReceiverAppOptions): Receiver {
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes <= 0) {
    throw new RangeError(`maxBodyBytes must be a whole number of bytes above 0, got ${maxBodyBytes}`);
  }
  for (const [name, value] of Object.entries({ maxIdLength, maxJsonDepth })) {
    if (!Number.isInteger(value) || value <= 0)
      throw new RangeError(`${name} must be a whole number above 0, got ${value}`);
  }
  const verifier = createWebhookVerifier({ secrets: webhookSecrets, toleranceSeconds });
  let readinessQueries = 0;
  let inFlight = 0;
  let draining = false;
  // The gauges read the store lazily, at scrape time, after both exist.
  const metrics = createReceiverMetrics({
    registry,
    connectionsInUse: () => store.batcher.committing + readinessQueries,
    connectionsMax: sql.options.max,
    queued: () => store.batcher.queued,
  });
  const store = createEventStore({
    sql,
    applicationId,
    timeoutMs: storeTimeoutMs,
    maxBatchSize,
    maxConcurrentCommits,
    onBatch: (size) => metrics.batchSize.observe(size),
  });

  const app: ReceiverApp = new Hono<ReceiverEnv>();
  app.use(async function trackInFlight(c, next) {
    inFlight++;
    try {
      await next();
    } finally {
      inFlight--;
      if (draining) c.header("connection", "close");
    }
  });
  app.post(
    "/webhooks/loops",
    createWebhookHandler({
      verifier,
      store,
      metrics,
      logger,
      maxBodyBytes,
      retryAfterSeconds,
      maxIdLength,
      maxJsonDepth,
    }),
  );
  app.all("/webhooks/loops", allow("POST"));
  mountHealthRoutes(app, {
    sql,
    liveness,
    draining: () => draining,
    onQuery: (delta) => {
      readinessQueries += delta;
    },
    logger,
  });
  app.all("/healthz", allow("GET, HEAD"));
  app.all("/readyz", allow("GET, HEAD"));
  app.notFound(() => problemResponse({ status: 404, code: "not_found", title: "Not found" }));
  app.onError((error) => {
    logger.error({ err: error }, "unexpected error in the receiver");
    return problemResponse({ status: 500, code: "internal_error", title: "Internal error" });
  });

  return {
    app,
    store,
    metrics,
    inFlight: () => inFlight,
    drain: () => {
      draining = true;
    },
  };
}

/** The receiver as a Hono app, for in-process use (`app.request`) or any server adapter. */
export function createReceiverApp(options: ReceiverAppOptions): ReceiverApp {
  return createReceiver(options).app;
}
