import type { Env, Logger } from "@loops-sync/config";
import { LoopsClient } from "@loops-sync/loops-client";

export interface LoopsClientUse {
  /**
   * For the worker: a 429 is thrown at once (never slept on) so the worker pauses the merchant and
   * reschedules the job at Retry-After without holding a job slot. Default: false (commands wait).
   */
  worker?: boolean;
}

/** The Loops API client configured from the environment (the LOOPS_* variables are required by then). */
export function createLoopsClientFromEnv(
  env: Env,
  logger?: Logger,
  { worker = false }: LoopsClientUse = {},
): LoopsClient {
  return new LoopsClient({
    ...(worker ? { retry: { maxRetryAfterSeconds: 0 } } : {}),
    apiUrl: env.LOOPS_API_URL!,
    authUrl: env.LOOPS_AUTH_URL!,
    clientId: env.LOOPS_CLIENT_ID!,
    clientSecret: env.LOOPS_CLIENT_SECRET!,
    ...(logger ? { logger } : {}),
  });
}

export const API_VARIABLES = [
  "LOOPS_API_URL",
  "LOOPS_AUTH_URL",
  "LOOPS_CLIENT_ID",
  "LOOPS_CLIENT_SECRET",
] as const;
