import type { Sql } from "@loops-sync/db";
import { listActiveMerchants } from "./list-active-merchants.ts";

/**
 * The active merchants a process start must catch up: those whose last complete catch-up (sync.cursors, a run
 * ended `ok`) ended more than `intervalMs` ago (CATCHUP_CRON's interval: a tick was missed while nothing
 * ran), or never (new merchants: backfill and first catch-up at once). A worker replaced while the others ran
 * finds every merchant caught up within the interval and calls for none (docs/decisions.md, "A start catches
 * up only what is due").
 */
export async function listDueCatchups(
  sql: Sql,
  configured: readonly string[],
  intervalMs: number,
): Promise<string[]> {
  const active = await listActiveMerchants(sql, configured);
  const recent = await sql<{ merchant_id: string }[]>`
    select merchant_id from sync.cursors
    where merchant_id = any(${active}::text[]) and last_run_status = 'ok'
      and last_run_finished_at > now() - make_interval(secs => ${intervalMs / 1000})`;
  const skip = new Set(recent.map((r) => r.merchant_id));
  return active.filter((id) => !skip.has(id));
}
