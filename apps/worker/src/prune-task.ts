import type { Logger } from "@loops-sync/config";
import { pruneFinished, type Sql } from "@loops-sync/db";
import type { Task } from "graphile-worker";

/** The database's `now()` minus `seconds`: one clock for every process deciding what is old. */
export async function cutoffBefore(sql: Sql, seconds: number): Promise<Date> {
  const [row] = await sql<{ before: Date }[]>`select now() - make_interval(secs => ${seconds}) as before`;
  return row!.before;
}

/** The worker's daily prune: every day at 03:30 UTC, one run at a time, never back-filled. */
export const PRUNE_CRONTAB = "30 3 * * * prune ?jobKey=prune&jobKeyMode=preserve_run_at&max=3";

/** The `prune` task: what `loops-sync prune` does, with RETENTION_DAYS as the age. */
export function pruneTask({
  sql,
  retentionDays,
  logger,
}: {
  sql: Sql;
  retentionDays: number;
  logger: Logger;
}): Task {
  return async () => {
    const before = await cutoffBefore(sql, retentionDays * 86_400);
    const result = await pruneFinished({ sql, before });
    logger.info(result, "prune done");
  };
}
