import { Command, InvalidArgumentError, Option } from "commander";
import { JSON_FLAG_HELP, printJson } from "../output.ts";
import { abortOnSignal } from "./catchup.ts";

const UNIT_SECONDS: Record<string, number> = { d: 86_400, h: 3600, m: 60 };

/** `--older-than 35d` (also `12h`, `90m`): an age in seconds. */
export function parseAge(value: string): number {
  const match = /^(\d+(?:\.\d+)?)([dhm])$/.exec(value.trim());
  const n = match ? Number(match[1]) * UNIT_SECONDS[match[2]!]! : Number.NaN;
  if (!(n > 0)) {
    throw new InvalidArgumentError(
      `expected an age like 35d, 12h or 90m (days, hours, minutes), got ${JSON.stringify(value)}`,
    );
  }
  return n;
}

export function createPruneCommand(): Command {
  return new Command("prune")
    .description(
      "delete events in a final outcome, jobs that used all their attempts, the change feed's changes and the events catch-up refused to store, older than the retention, in small batches (the worker does this daily)",
    )
    .addOption(
      new Option("--older-than <age>", "age like 35d, 12h or 90m (default: RETENTION_DAYS days)").argParser(
        parseAge,
      ),
    )
    .addOption(new Option("--dry-run", "count what would be deleted, delete nothing"))
    .addOption(new Option("--json", JSON_FLAG_HELP))
    .action(async (options: { olderThan?: number; dryRun?: boolean; json?: boolean }) => {
      const { pruneFinished } = await import("@loops-sync/db");
      const { cutoffBefore } = await import("@loops-sync/worker");
      const { openRuntime } = await import("../runtime.ts");
      const runtime = await openRuntime({ name: "prune", poolSize: 2 });
      const abort = abortOnSignal();
      try {
        const seconds = options.olderThan ?? runtime.env.RETENTION_DAYS * 86_400;
        const before = await cutoffBefore(runtime.sql, seconds);
        // Feed consumers' unacknowledged changes are kept for RETENTION_DAYS, whatever --older-than says.
        const retainedBefore = await cutoffBefore(runtime.sql, runtime.env.RETENTION_DAYS * 86_400);
        const result = await pruneFinished({
          sql: runtime.sql,
          before,
          retainedBefore,
          dryRun: options.dryRun ?? false,
          signal: abort.signal,
          onBatch: (p) => runtime.logger.debug(p, "prune batch"),
        }).catch((error: unknown) => {
          throw abort.signal.aborted ? abort.signal.reason : error;
        });
        if (options.json) printJson(result);
        else {
          const verb = result.dryRun ? "would delete" : "deleted";
          console.log(
            `prune: ${verb} ${result.eventsDeleted} event(s), ${result.jobsDeleted} failed job(s), ${result.changesDeleted} change(s) ` +
              `and ${result.refusedEventsDeleted} refused event(s) older than ${result.before}; ` +
              `kept ${result.eventsKept} older event(s) that cursors and status still read, and every pending or failed event`,
          );
          console.log(
            `prune: the change feed ${result.dryRun ? "would be" : "is"} pruned through position ${result.changesPrunedThrough} ` +
              "(read_changes raises changes_expired for a cursor below it)",
          );
        }
      } finally {
        abort.dispose();
        await runtime.close();
      }
    });
}
