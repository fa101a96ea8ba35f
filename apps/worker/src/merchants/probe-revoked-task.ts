import { reopenRevokedMerchant } from "@loops-sync/db";
import { classifyUpstreamFailure } from "@loops-sync/replica";
import type { Task } from "graphile-worker";
import type { WorkerContext } from "../worker-context.ts";
import { confirmActiveConnection } from "./confirm-active-connection.ts";
import type { ConnectionInput } from "./upsert-merchant.ts";

/** REVOKED_PROBE_CRON's default: hourly, at a minute off the hour's rush. */
export const REVOKED_PROBE_CRON = "41 * * * *";

/** The crontab line: keyed, so a tick landing on a probe still queued adds nothing. */
export const revokedProbeCrontab = (cron: string) =>
  `${cron} probe_revoked ?jobKey=probe_revoked&jobKeyMode=preserve_run_at`;

/**
 * probe_revoked (on REVOKED_PROBE_CRON): catch-up skips revoked merchants, so one that reconnects and sends
 * nothing would stay revoked. Each revoked merchant's GET /connection is asked once a run, at background
 * priority (the client's default for a merchant): an active answer is a reconnect, taken by the same path as
 * an event naming a new connection (revoked → unconfirmed → active: its new connection mirrored, catch-up from
 * its cursor, a reconcile). A refusal or a revoked answer leaves it revoked until the next run.
 */
export function probeRevokedTask(ctx: WorkerContext): Task {
  const { sql, client, logger, metrics } = ctx;
  return async function probeRevoked(_payload, helpers) {
    const revoked = await sql<{ id: string }[]>`
      select id from sync.merchants where status = 'revoked' order by id`;
    let reconnected = 0;
    for (const { id } of revoked) {
      if (helpers.abortSignal?.aborted) break;
      let connection: ConnectionInput;
      try {
        connection = (await client
          .forMerchant(id)
          .connection.get({ signal: helpers.abortSignal })) as ConnectionInput;
      } catch (error) {
        const { kind } = classifyUpstreamFailure(error);
        // Loops asks us to wait, or refuses the application: the rest wait for the next run.
        if (kind === "rate_limited" || kind === "paused") break;
        // Still refused (connection_not_active) or not answered: it stays revoked; the next run asks again.
        if (kind !== "revoked")
          logger.debug({ merchantId: id, error: String(error) }, "probe of a revoked merchant not answered");
        continue;
      }
      if (
        connection?.status !== "active" ||
        connection.merchant_id !== id ||
        typeof connection.id !== "string"
      )
        continue;
      const moved = await sql.begin(async (tx) => {
        if (!(await reopenRevokedMerchant(tx, id, connection.id))) return false;
        await confirmActiveConnection(tx, id, connection, "reconcile");
        return true;
      });
      if (moved) {
        reconnected++;
        logger.info(
          { merchantId: id, connectionId: connection.id },
          "a revoked merchant's connection is active again (no event said so): synced again from its cursor",
        );
      }
    }
    metrics.jobs.inc({ task: "probe_revoked", result: "success" });
    if (revoked.length > 0) logger.info({ probed: revoked.length, reconnected }, "revoked merchants probed");
  };
}
