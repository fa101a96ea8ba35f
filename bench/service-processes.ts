import type { Sandbox } from "@loops-sync/sandbox";
import { loopsApiEnv } from "#testkit/processes";
import { type CliProcess, startCliProcess } from "./cli-process.ts";

export interface ServiceEnvOptions {
  databaseUrl: string;
  sandbox: Sandbox;
}

/** The environment a deployment would give loops-sync, pointed at this run's database and sandbox. */
export function serviceEnv({ databaseUrl, sandbox }: ServiceEnvOptions): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    ...loopsApiEnv(sandbox),
    // These benches measure the pipeline, so the shared request budget must not be what limits it (at 1,000
    // events/s a budget of 1,000 is saturated); bench/tenants.ts measures the budget itself.
    LOOPS_MAX_RPS: process.env.BENCH_LOOPS_MAX_RPS ?? "10000",
    LOOPS_MERCHANT_IDS: sandbox.merchantIds.join(","),
    LOOPS_SYNC_MIGRATE_ON_START: "false",
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
    // One catch-up run is measured at a time: the worker's own cron must not start another meanwhile.
    CATCHUP_CRON: "0 0 1 1 *",
    ...(process.env.BENCH_CHILD_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_CHILD_NODE_OPTIONS } : {}),
  };
}

export interface RunningService {
  process: CliProcess;
  url?: string;
}

/** `loops-sync receiver` on a free port; resolves once it listens. */
export async function startReceiverProcess(
  env: Record<string, string>,
  webhookSecret: string,
): Promise<RunningService> {
  const process = startCliProcess(["receiver"], {
    ...env,
    PORT: "0",
    ADMIN_PORT: "0",
    LOOPS_WEBHOOK_SECRETS: webhookSecret,
  });
  const line = await process.waitForLine((l) => l.msg === "receiver listening" && typeof l.url === "string");
  return { process, url: String(line.url) };
}

/** `loops-sync worker` with `concurrency` jobs at once; resolves once its runner has started. */
export async function startWorkerProcess(
  env: Record<string, string>,
  { concurrency, poolSize }: { concurrency: number; poolSize: number },
): Promise<RunningService> {
  const process = startCliProcess(["worker"], {
    ...env,
    ADMIN_PORT: "0",
    WORKER_CONCURRENCY: String(concurrency),
    DATABASE_POOL_SIZE: String(poolSize),
  });
  await process.waitForLine((l) => l.msg === "worker started");
  return { process };
}
