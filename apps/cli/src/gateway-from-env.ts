import { ConfigError, type Logger } from "@loops-sync/config";
import { createGatewayApp, type ReceiverEnv } from "@loops-sync/receiver";
import { createWriteMirror } from "@loops-sync/worker";
import type { Hono } from "hono";
import type { Registry } from "prom-client";
import { API_VARIABLES, createLoopsClientFromEnv } from "./clients.ts";
import type { Runtime } from "./runtime.ts";

/**
 * The gateway of `receiver` and `start` when GATEWAY_TOKEN is set: writes go to Loops through a client of its
 * own (the LOOPS_* credentials, the shared request budget) and land in the mirror through the pool.
 */
export function createGatewayFromEnv(
  runtime: Runtime,
  registry: Registry,
  logger: Logger,
): Hono<ReceiverEnv> {
  const { env, sql, databaseUrl } = runtime;
  for (const variable of API_VARIABLES) {
    if (!env[variable]) {
      throw new ConfigError(
        variable,
        `${variable}: required when GATEWAY_TOKEN is set (the gateway calls Loops with loops-sync's own credentials)`,
      );
    }
  }
  const client = createLoopsClientFromEnv(env, logger, { databaseUrl });
  return createGatewayApp({
    token: env.GATEWAY_TOKEN!,
    waitMs: env.GATEWAY_WAIT_MS,
    send: (request) => client.forward(request),
    mirror: createWriteMirror({ sql, logger }),
    registry,
    logger,
  });
}
