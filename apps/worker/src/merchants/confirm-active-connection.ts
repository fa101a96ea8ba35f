import {
  causedBy,
  confirmMerchant,
  PROCESS_EVENTS_MAX_ATTEMPTS,
  recordChanges,
  type TransactionSql,
} from "@loops-sync/db";
import { enqueueJob } from "@loops-sync/replica";
import { queueFirstCatchup, queueFirstReconcile } from "../reconcile/pace-background.ts";
import { type ConnectionInput, upsertConnection } from "./upsert-merchant.ts";

/**
 * GET /connection answered an unconfirmed merchant active: it becomes active, its connection mirrored, its
 * pending events dispatched again and its whole mirror reconciled; one that was revoked before (a reconnect)
 * also reads its event log again from its cursor. Shared by confirm_merchant (an event named it) and
 * probe_revoked (a reconnect that sent no event). Nothing happens when it is no longer unconfirmed.
 */
export async function confirmActiveConnection(
  tx: TransactionSql,
  merchantId: string,
  connection: ConnectionInput,
  /** The feed's source of its changes when no event named it. */
  source: "webhook" | "reconcile" = "webhook",
): Promise<void> {
  // Null: no longer unconfirmed (another confirmation came first).
  const confirmed = await confirmMerchant(tx, merchantId, connection.id);
  if (!confirmed) return;
  const changes = await upsertConnection(tx, connection);
  const pending = await tx<{ id: string; source: "webhook" | "catchup" | "cli" }[]>`
    select id, source from sync.events e
    where merchant_id = ${merchantId} and outcome = 'pending'
      and not exists (select 1 from sync.order_refresh r where r.event_id = e.id)
    order by id`;
  if (pending.length > 0) {
    await enqueueJob(tx, {
      task: "process_events",
      payload: { eventIds: pending.map((e) => e.id) },
      maxAttempts: PROCESS_EVENTS_MAX_ATTEMPTS,
    });
  }
  // Ahead of routine background work, behind event jobs (docs/scaling.md, "Live first").
  await queueFirstReconcile(tx, merchantId);
  // Events of the time it was revoked were skipped, and catch-up left it out: read its event log again from
  // its cursor.
  if (confirmed.wasRevoked) await queueFirstCatchup(tx, merchantId);
  // Read because the first of these events named the merchant (none: the probe found it).
  await recordChanges(tx, causedBy(changes, pending[0] ?? null, source));
}
