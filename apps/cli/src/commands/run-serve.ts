// The receiver, worker and start verbs' run, loaded by their commands (serve.ts) only when one runs.
import { ConfigError, createStopStack, type StopStack } from "@loops-sync/config";
import { GATEWAY_PREFIX, startReceiver } from "@loops-sync/receiver";
import { startWorker } from "@loops-sync/worker";
import { Registry } from "prom-client";
import { startAdminServer } from "../admin-server.ts";
import { CliError, EXIT } from "../cli-error.ts";
import { API_VARIABLES, createLoopsClientFromEnv } from "../clients.ts";
import { createGatewayFromEnv } from "../gateway-from-env.ts";
import { createProcessHealth, type ProcessHealth } from "../process-health.ts";
import { registerProcessMetrics } from "../process-metrics.ts";
import { openRuntime, type Runtime } from "../runtime.ts";

export type Part = "receiver" | "worker";

/** Runs `start`, naming the variable to change when its port is taken. */
async function listen<T>(variable: "PORT" | "ADMIN_PORT", port: number, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    if ((error as { code?: string }).code === "EADDRINUSE") {
      throw new CliError(
        `${variable}: port ${port} is already in use; set ${variable} to a free port (0 picks one)`,
        EXIT.usage,
        { cause: error },
      );
    }
    throw error;
  }
}

/**
 * Starts the parts, pushing each one's stop onto `stops` as soon as it runs, so a failure halfway leaves
 * nothing running behind. Listening sockets come first: a taken port fails before the worker has picked up
 * any job.
 */
async function startParts(
  runtime: Runtime,
  parts: readonly Part[],
  health: ProcessHealth,
  stops: StopStack,
): Promise<void> {
  const { env, logger, sql } = runtime;
  // One registry per process, served on the admin listener: in `start` it shows both parts' series.
  const registry = new Registry();
  registerProcessMetrics({
    registry,
    sql,
    merchantLabelsMax: env.METRICS_MERCHANT_LABELS_MAX,
    onError: (error) => logger.warn({ err: error }, "cannot read the backlog for /metrics"),
  });
  const gateway =
    parts.includes("receiver") && env.GATEWAY_TOKEN
      ? createGatewayFromEnv(runtime, registry, logger.child({ name: "gateway" }))
      : undefined;
  const admin = await listen("ADMIN_PORT", env.ADMIN_PORT, () =>
    startAdminServer({
      gateway,
      registry,
      health,
      sql,
      statusPage: env.STATUS_PAGE,
      token: env.ADMIN_TOKEN,
      port: env.ADMIN_PORT,
      host: env.ADMIN_HOST,
    }),
  );
  logger.info({ url: admin.url, auth: env.ADMIN_TOKEN ? "bearer" : "none" }, "admin listening");
  if (gateway) logger.info({ url: `${admin.url}${GATEWAY_PREFIX}` }, "gateway listening");
  stops.push("admin listener", () => admin.close());
  let drainFirst: (() => Promise<void>) | undefined;
  if (parts.includes("receiver")) {
    const receiver = await listen("PORT", env.PORT, () =>
      startReceiver({
        sql,
        webhookSecrets: env.LOOPS_WEBHOOK_SECRETS,
        applicationId: env.LOOPS_APPLICATION_ID,
        toleranceSeconds: env.WEBHOOK_TOLERANCE_SECONDS,
        maxBodyBytes: env.WEBHOOK_MAX_BODY_BYTES,
        maxIdLength: env.WEBHOOK_MAX_ID_LENGTH,
        maxJsonDepth: env.WEBHOOK_MAX_JSON_DEPTH,
        port: env.PORT,
        host: env.HOST,
        registry,
        liveness: () => health.liveness(),
        logger: logger.child({ name: "receiver" }),
      }),
    );
    logger.info({ url: receiver.url }, "receiver listening");
    stops.push("receiver", () => receiver.close());
    drainFirst = () => receiver.close();
  }
  if (parts.includes("worker")) {
    const client = createLoopsClientFromEnv(env, logger.child({ name: "loops-client" }), {
      databaseUrl: runtime.databaseUrl,
      worker: true,
    });
    const pauseBackoff = {
      firstSeconds: env.PAUSE_PROBE_FIRST_SECONDS,
      maxSeconds: env.PAUSE_PROBE_MAX_SECONDS,
    };
    const worker = await startWorker({
      databaseUrl: runtime.databaseUrl,
      sql,
      client,
      applicationId: env.LOOPS_APPLICATION_ID,
      concurrency: env.WORKER_CONCURRENCY,
      merchantIds: env.LOOPS_MERCHANT_IDS,
      resourcesCron: env.RECONCILE_CRON,
      revokedProbeCron: env.REVOKED_PROBE_CRON,
      reconcileShare: env.RECONCILE_BUDGET_SHARE,
      logger: logger.child({ name: "worker" }),
      registry,
      pauseBackoff,
      databaseGraceSeconds: env.HEALTH_DATABASE_GRACE_SECONDS,
      confirmWithinSeconds: env.CONFIRM_WITHIN_SECONDS,
      maxRps: env.LOOPS_MAX_RPS,
      catchup: { client, cron: env.CATCHUP_CRON, logger: logger.child({ name: "catchup" }) },
      prune: { retentionDays: env.RETENTION_DAYS, logger: logger.child({ name: "prune" }) },
      forward: env.FORWARD_URL
        ? {
            url: env.FORWARD_URL,
            secret: env.FORWARD_SECRET!,
            resources: env.FORWARD_RESOURCES,
            timeoutMs: env.FORWARD_TIMEOUT_MS,
            maxAgeHours: env.FORWARD_MAX_AGE_HOURS,
            maxInFlight: env.FORWARD_MAX_IN_FLIGHT,
            ...(env.FORWARD_MAX_RPS === undefined ? {} : { maxRps: env.FORWARD_MAX_RPS }),
          }
        : undefined,
    });
    health.addPart({
      live: () => {
        const reason = worker.stoppedBecause();
        return reason ? { code: "worker_stopped", detail: `${reason}; restart the process` } : undefined;
      },
    });
    stops.push("worker", () => worker.stop());
  }
  // Pushed when it started, so a worker that fails to start stops it; pushed again on top so that on a normal
  // stop it stops taking webhooks and drains first (close() is safe twice).
  if (drainFirst) stops.push("receiver, draining first", drainFirst);
}

/** Runs `parts` until `signalled` resolves, then stops them in order. */
export async function runServe(
  name: "receiver" | "worker" | "start",
  parts: readonly Part[],
  options: { migrate: boolean },
  signalled: Promise<unknown>,
): Promise<void> {
  const require = [
    ...(parts.includes("receiver") ? (["LOOPS_WEBHOOK_SECRETS"] as const) : []),
    ...(parts.includes("worker") ? API_VARIABLES : []),
  ];
  const runtime = await openRuntime({
    name,
    require,
    service: true,
    noMigrate: !options.migrate,
    tracing: true,
  });
  if (parts.includes("worker") && runtime.env.DATABASE_POOL_SIZE < 2) {
    await runtime.close();
    throw new ConfigError(
      "DATABASE_POOL_SIZE",
      `DATABASE_POOL_SIZE: got "${runtime.env.DATABASE_POOL_SIZE}", expected at least 2 for a worker ` +
        "(its order batches hold connections while they fetch, and their commits need one more)",
    );
  }
  // Last started, first stopped (the receiver drains first), each failure logged; the pool last of all.
  const stops = createStopStack({ logger: runtime.logger });
  stops.push("database", () => runtime.close());
  const health = createProcessHealth({
    sql: runtime.sql,
    graceSeconds: runtime.env.HEALTH_DATABASE_GRACE_SECONDS,
  });
  stops.push("process health", () => health.close());
  const stopAll = async () => {
    health.stopping();
    await stops.stopAll();
  };
  let started = false;
  health.addPart({
    ready: () => (started ? undefined : { code: "starting", detail: "the process is starting" }),
  });
  try {
    await startParts(runtime, parts, health, stops);
    started = true;
  } catch (error) {
    await stopAll();
    throw error;
  }
  await signalled;
  runtime.logger.info("shutting down: finishing in-flight work");
  await stopAll();
}
