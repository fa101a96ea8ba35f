import { catchupCrontab, catchupTasks, scheduleCatchup } from "@loops-sync/catchup";
import { version } from "@loops-sync/config";
import { startReceiver } from "@loops-sync/receiver";
import { createStatusPage } from "@loops-sync/status";
import { startWorker } from "@loops-sync/worker";
import { Command, Option } from "commander";
import { Gauge, Registry } from "prom-client";
import { CliError, EXIT } from "../cli-error.ts";
import { API_VARIABLES, createLoopsClientFromEnv } from "../clients.ts";
import { startMetricsServer } from "../metrics-server.ts";
import { openRuntime, type Runtime } from "../runtime.ts";
import { untilSignal } from "../shutdown.ts";

type Part = "receiver" | "worker";

const DESCRIPTIONS: Record<string, string> = {
  receiver: "run the webhook receiver (POST /webhooks/loops, /healthz, /readyz, /metrics, /status)",
  worker: "run the worker: apply stored events, refresh resources, catch up from the event log",
  start: "run the receiver and the worker in one process",
};

/** Runs `start`, naming the variable to change when its port is taken. */
async function listen<T>(
  variable: "PORT" | "METRICS_PORT",
  port: number,
  start: () => Promise<T>,
): Promise<T> {
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
 * Starts the parts, pushing each one's stop onto `stops` (in the order they must stop) as soon as it runs,
 * so a failure halfway leaves nothing running behind. Listening sockets come first: a taken port fails
 * before the worker has picked up any job.
 */
async function startParts(
  runtime: Runtime,
  parts: readonly Part[],
  stops: Array<() => Promise<void>>,
): Promise<void> {
  const { env, logger, sql } = runtime;
  // One registry per process: in `start` the receiver's /metrics also shows the worker's series.
  const registry = new Registry();
  new Gauge({
    name: "loops_sync_build_info",
    help: "Always 1; the running release in its version label",
    labelNames: ["version"],
    registers: [registry],
  }).set({ version }, 1);
  if (parts.includes("receiver")) {
    const receiver = await listen("PORT", env.PORT, () =>
      startReceiver({
        sql,
        webhookSecrets: env.LOOPS_WEBHOOK_SECRETS,
        applicationId: env.LOOPS_APPLICATION_ID,
        toleranceSeconds: env.WEBHOOK_TOLERANCE_SECONDS,
        maxBodyBytes: env.WEBHOOK_MAX_BODY_BYTES,
        port: env.PORT,
        host: env.HOST,
        statusPage: env.STATUS_PAGE,
        registry,
        extraRoutes: (app) => {
          if (env.STATUS_PAGE) app.route("/status", createStatusPage({ sql }));
        },
        logger: logger.child({ name: "receiver" }),
      }),
    );
    logger.info({ url: receiver.url }, "receiver listening");
    stops.push(() => receiver.close());
  } else {
    const metrics = await listen("METRICS_PORT", env.METRICS_PORT, () =>
      startMetricsServer({ registry, port: env.METRICS_PORT, host: env.HOST }),
    );
    logger.info({ url: `${metrics.url}/metrics` }, "worker metrics listening");
    stops.push(() => metrics.close());
  }
  if (parts.includes("worker")) {
    const client = createLoopsClientFromEnv(env, logger.child({ name: "loops-client" }), { worker: true });
    const worker = await startWorker({
      databaseUrl: runtime.databaseUrl,
      sql,
      client,
      applicationId: env.LOOPS_APPLICATION_ID,
      concurrency: env.WORKER_CONCURRENCY,
      merchantIds: env.LOOPS_MERCHANT_IDS,
      logger: logger.child({ name: "worker" }),
      registry,
      extraTasks: catchupTasks({
        sql,
        client,
        applicationId: env.LOOPS_APPLICATION_ID,
        merchantIds: env.LOOPS_MERCHANT_IDS,
        logger: logger.child({ name: "catchup" }),
      }),
      extraCrontab: catchupCrontab(env.CATCHUP_CRON),
    });
    stops.push(() => worker.stop());
    // Catch up once at start: whatever happened while nothing was running is read from the event log.
    await scheduleCatchup(sql);
  }
}

function createServeCommand(name: "receiver" | "worker" | "start", parts: readonly Part[]): Command {
  return new Command(name)
    .description(DESCRIPTIONS[name]!)
    .addOption(
      new Option("--no-migrate", "do not apply migrations at start (default: LOOPS_SYNC_MIGRATE_ON_START)"),
    )
    .action(async (options: { migrate: boolean }) => {
      const require = [
        ...(parts.includes("receiver") ? (["LOOPS_WEBHOOK_SECRETS"] as const) : []),
        ...(parts.includes("worker") ? API_VARIABLES : []),
      ];
      const runtime = await openRuntime({ name, require, ...(options.migrate ? {} : { migrate: false }) });
      // Receiver first (stop accepting, drain), then the worker, then the pool.
      const stops: Array<() => Promise<void>> = [];
      const stopAll = async () => {
        for (const stop of stops.splice(0)) await stop().catch(() => {});
        await runtime.close();
      };
      try {
        await startParts(runtime, parts, stops);
      } catch (error) {
        await stopAll();
        throw error;
      }
      await untilSignal();
      runtime.logger.info("shutting down: finishing in-flight work");
      await stopAll();
    });
}

export const createReceiverCommand = () => createServeCommand("receiver", ["receiver"]);
export const createWorkerCommand = () => createServeCommand("worker", ["worker"]);
export const createStartCommand = () => createServeCommand("start", ["receiver", "worker"]);
