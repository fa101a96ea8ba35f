import type { Sql } from "@loops-sync/db";
import { readChangeFeed } from "./read-change-feed.ts";
import { readConsumers } from "./read-consumers.ts";
import { readEventsPerMinute } from "./read-events-per-minute.ts";
import { readForwarding } from "./read-forwarding.ts";
import { readGatewayWrites } from "./read-gateway-writes.ts";
import { readMerchantStatuses } from "./read-merchant-statuses.ts";
import { readQueueStatus } from "./read-queue-status.ts";
import { readRecoveryStatus } from "./read-recovery-status.ts";
import { readRequestBudgetStatus, readScheduledTicks } from "./read-scheduled-ticks.ts";
import { readUnhandledEvents } from "./read-unhandled-events.ts";
import type { SyncStatus } from "./sync-status.ts";

/**
 * A snapshot of the sync's health: per merchant (cursor, last webhook, last catch-up, lag, pending and
 * failed events, revoked or not), the job queue, events per minute by outcome over the last hour, and the
 * change feed's head and size.
 * Read in one read-only repeatable-read transaction, so its figures agree with each other.
 */
export async function readSyncStatus(sql: Sql): Promise<SyncStatus> {
  return sql.begin("isolation level repeatable read read only", async (tx) => {
    const merchants = await readMerchantStatuses(tx);
    const queue = await readQueueStatus(tx);
    const { eventsPerMinute, eventsLastHour, now } = await readEventsPerMinute(tx);
    const unhandledEvents = await readUnhandledEvents(tx);
    const changeFeed = await readChangeFeed(tx);
    const forwarding = await readForwarding(tx);
    const consumers = await readConsumers(tx);
    const gatewayWrites = await readGatewayWrites(tx);
    const recovery = await readRecoveryStatus(tx);
    const scheduledTicks = await readScheduledTicks(tx);
    const requestBudget = await readRequestBudgetStatus(tx);
    return {
      generatedAt: now.toISOString(),
      merchants,
      queue,
      eventsPerMinute,
      eventsLastHour,
      unhandledEvents,
      changeFeed,
      forwarding,
      consumers,
      gatewayWrites,
      recovery,
      scheduledTicks,
      requestBudget,
      merchantsTotal: merchants.length,
      merchantsRevoked: merchants.filter((m) => m.revoked).length,
    };
  }) as Promise<SyncStatus>;
}
