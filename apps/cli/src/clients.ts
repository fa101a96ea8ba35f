import type { Env, Logger } from "@loops-sync/config";
import { budgetSlotCap, connect, requestBudget } from "@loops-sync/db";
import { type HttpFetch, LoopsClient, SharedBudgetGate } from "@loops-sync/loops-client";

export interface LoopsClientUse {
  /** The database holding the deployment's request budget (`LOOPS_MAX_RPS`), shared with every process. */
  databaseUrl: string;
  /**
   * For the worker: a 429 is thrown at once, never slept on in a job slot (docs/decisions.md, "A 429 does
   * not burn an attempt"). Default: false (commands wait).
   */
  worker?: boolean;
  /** The client's HTTP, e.g. one that also reads each answer's `Date` header (doctor). Default: the client's own. */
  fetch?: HttpFetch;
}

/** The Loops API client configured from the environment (the LOOPS_* variables are required by then). */
export function createLoopsClientFromEnv(
  env: Env,
  logger: Logger | undefined,
  { databaseUrl, worker = false, fetch }: LoopsClientUse,
): LoopsClient {
  // A connection of its own: callers may hold every pooled connection in transactions that wait on the
  // budget, and the budget must still answer. It closes when idle, so a command exits without waiting.
  const budgetSql = connect(databaseUrl, {
    max: 1,
    idleTimeoutSeconds: 1,
    applicationName: "loops-sync request-budget",
  });
  const budget = requestBudget(budgetSql, {
    maxRps: env.LOOPS_MAX_RPS,
    backgroundShare: env.RECONCILE_BUDGET_SHARE,
  });
  const gate = new SharedBudgetGate({
    take: budget.take,
    narrow: budget.narrow,
    // A batch bigger than a slot's share would only be dropped unspent.
    maxBatch: budgetSlotCap(env.LOOPS_MAX_RPS),
    onError: (error) =>
      logger?.warn({ err: error }, "could not reach the request budget in Postgres; retrying"),
  });
  return new LoopsClient({
    ...(worker ? { retry: { maxRetryAfterSeconds: 0 } } : {}),
    apiUrl: env.LOOPS_API_URL!,
    authUrl: env.LOOPS_AUTH_URL!,
    clientId: env.LOOPS_CLIENT_ID!,
    clientSecret: env.LOOPS_CLIENT_SECRET!,
    gate,
    ...(fetch ? { fetch } : {}),
    ...(logger ? { logger } : {}),
  });
}

export const API_VARIABLES = [
  "LOOPS_API_URL",
  "LOOPS_AUTH_URL",
  "LOOPS_CLIENT_ID",
  "LOOPS_CLIENT_SECRET",
] as const;
