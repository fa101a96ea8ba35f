import type { Logger } from "@loops-sync/config";
import { readRequestBudget, type Sql } from "@loops-sync/db";

/** Share of the rate in force, used over the last second, from which order batches read in bulk. */
export const BULK_FROM_SHARE = 0.5;
/** Share below which they read each order alone again (lower than BULK_FROM_SHARE: no flapping). */
export const SINGLE_BELOW_SHARE = 0.2;

export interface BudgetPressureOptions {
  sql: Sql;
  /** LOOPS_MAX_RPS: the deployment's budget, the same in every process. */
  maxRps: number;
  logger: Logger;
  /** How often the budget's last second is read. Default: 1000 ms. */
  everyMs?: number;
}

export interface BudgetPressure {
  /** Whether the shared budget is busy: order batches then read several orders from one list page. */
  busy(): boolean;
  stop(): void;
}

/**
 * Whether the deployment's request budget is busy, read from `sync.request_budget` once a second (every
 * process's calls, live, confirmations and background alike). A list page saves calls but costs latency: it
 * is one more round trip before the orders it misses are fetched alone, and a bigger answer to build and
 * apply. So order batches read in bulk only while the budget is the limit: from half of the rate in force
 * used in the last second, until less than a fifth is (docs/decisions.md, "Bulk reads when the budget is
 * busy"). While Postgres cannot answer, the last reading stands.
 */
export function startBudgetPressure({
  sql,
  maxRps,
  logger,
  everyMs = 1000,
}: BudgetPressureOptions): BudgetPressure {
  let busy = false;
  let reading = false;
  const read = async () => {
    if (reading) return;
    reading = true;
    try {
      const { rateInForce, grantedLastSecond } = await readRequestBudget(sql, { maxRps });
      const share = grantedLastSecond / Math.max(1, rateInForce);
      const next = busy ? share >= SINGLE_BELOW_SHARE : share >= BULK_FROM_SHARE;
      if (next !== busy) {
        logger.info(
          { grantedLastSecond, rateInForce },
          next
            ? "the request budget is busy; order batches read several orders from one list page"
            : "the request budget is free again; order batches read each order alone",
        );
      }
      busy = next;
    } catch (error) {
      logger.debug({ error: String(error) }, "could not read the request budget; keeping the last reading");
    } finally {
      reading = false;
    }
  };
  const timer = setInterval(() => void read(), everyMs);
  timer.unref();
  void read();
  return {
    busy: () => busy,
    stop: () => clearInterval(timer),
  };
}
