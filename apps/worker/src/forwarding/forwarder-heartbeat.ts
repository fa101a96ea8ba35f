import type { Sql } from "@loops-sync/db";

/** How often a running forwarder records that it runs (sync.forward_progress.seen_at). */
export const FORWARD_HEARTBEAT_MS = 10_000;

/**
 * Records that a forwarder runs now. Status calls forwarding off when no forwarder did so for a while
 * (`FORWARD_OFF_AFTER_SECONDS` in @loops-sync/status): FORWARD_URL unset on every worker, or none running.
 */
export async function markForwarderSeen(sql: Sql): Promise<void> {
  await sql`update sync.forward_progress set seen_at = now()`;
}

/**
 * A forwarder stopped cleanly: forwarding shows as off at once (another running forwarder sets it again
 * within FORWARD_HEARTBEAT_MS).
 */
export async function markForwarderGone(sql: Sql): Promise<void> {
  await sql`update sync.forward_progress set seen_at = null`;
}
