import type { Database } from "@loops-sync/schema";
import { Argument, Command, Option } from "commander";
import { CliError, EXIT } from "../cli-error.ts";
import { parseEventId, parseEventType, parseIsoDate, parseMerchantId } from "../flags.ts";
import { JSON_FLAG_HELP, printJson } from "../output.ts";
import type { FailedEventFilter } from "../replay-failed-events.ts";
import { createRunProgress } from "./catchup.ts";

interface ReplayOptions extends FailedEventFilter {
  json?: boolean;
  failed?: boolean;
  dryRun?: boolean;
}

/** One EVENT_ID, or --failed with its filters: anything else is a usage error naming the flag. */
function checkReplayFlags(eventId: string | undefined, options: ReplayOptions): void {
  const usage = (line: string) => new CliError(`replay: ${line}`, EXIT.usage);
  if (eventId && options.failed) {
    throw usage(
      "give an EVENT_ID or --failed, not both (--failed replays every failed event its filters take)",
    );
  }
  if (!eventId && !options.failed) {
    throw usage("give an EVENT_ID, or --failed to replay failed events in bulk (see --help)");
  }
  if (!options.failed) {
    const flag = (["merchantId", "type", "since", "dryRun"] as const).find((k) => options[k] !== undefined);
    const name = { merchantId: "--merchant", type: "--type", since: "--since", dryRun: "--dry-run" };
    if (flag)
      throw usage(`${name[flag]} only works with --failed; drop it, or use --failed instead of an EVENT_ID`);
  }
}

/**
 * `replay --failed`: lists (--dry-run) or puts back every failed event the filters take, in small
 * transactions, with a progress bar on a terminal.
 */
async function replayFailed(options: ReplayOptions): Promise<void> {
  const { listFailedEvents, replayFailedEvents } = await import("../replay-failed-events.ts");
  const { openRuntime } = await import("../runtime.ts");
  // --dry-run only lists, so it runs on a standby too.
  const runtime = await openRuntime({ name: "replay", poolSize: 2, readOnly: options.dryRun === true });
  const filter: FailedEventFilter = {
    merchantId: options.merchantId,
    type: options.type,
    since: options.since,
  };
  try {
    if (options.dryRun) {
      const events = await listFailedEvents(runtime.sql, filter);
      if (options.json) return printJson({ dryRun: true, matched: events.length, events });
      for (const e of events)
        console.log(`${e.id} ${e.type} ${e.merchantId} ${e.receivedAt} ${e.error ?? ""}`);
      console.log(`replay: ${events.length} failed event(s) would be replayed (dry run: nothing changed)`);
      return;
    }
    const progress = createRunProgress("events");
    try {
      const result = await replayFailedEvents(runtime.sql, filter, {
        onBatch: (p) => progress.update("replay", p.replayed, p.replayed / p.total),
      });
      progress.stop();
      if (options.json) return printJson({ dryRun: false, ...result });
      const types = Object.entries(result.byType).map(([t, n]) => `${n} ${t}`);
      console.log(
        `replay: ${result.replayed} failed event(s) queued for the worker in ${result.batches} batch(es)` +
          (types.length > 0 ? ` (${types.join(", ")})` : ""),
      );
    } finally {
      progress.stop();
    }
  } finally {
    await runtime.close();
  }
}

/**
 * Puts a stored event back to `pending` and adds a process_events job for it, in one transaction, so the
 * worker dispatches it again as if it had just arrived (order events whose version the replica already holds
 * are settled as stale without a call).
 */
export function createReplayCommand(): Command {
  return new Command("replay")
    .description(
      "re-apply an event already stored in sync.events (or, with --failed, every failed one the filters take): reset its outcome to pending and queue it for the worker",
    )
    .addArgument(
      new Argument("[event-id]", "the stored event, e.g. evt_abc123 (or --failed)").argParser(parseEventId),
    )
    .addOption(
      new Option("--failed", "replay every failed event the filters below take, in small transactions"),
    )
    .addOption(
      new Option("--merchant <id>", "with --failed: only this merchant's").argParser(parseMerchantId),
    )
    .addOption(
      new Option(
        "--type <type>",
        "with --failed: only this type (order.updated) or family (order.*)",
      ).argParser(parseEventType),
    )
    .addOption(
      new Option("--since <iso>", "with --failed: only events received at or after this time").argParser(
        parseIsoDate,
      ),
    )
    .addOption(new Option("--dry-run", "with --failed: list what would be replayed; change nothing"))
    .addOption(new Option("--json", JSON_FLAG_HELP))
    .action(async (eventId: string | undefined, rawOptions: ReplayOptions & { merchant?: string }) => {
      const { merchant, ...rest } = rawOptions;
      const options: ReplayOptions = { ...rest, ...(merchant ? { merchantId: merchant } : {}) };
      checkReplayFlags(eventId, options);
      if (!eventId) return await replayFailed(options);
      const { PROCESS_EVENTS_MAX_ATTEMPTS, reopenEvents } = await import("@loops-sync/db");
      const { enqueueJob } = await import("@loops-sync/replica");
      const { kyselyOver } = await import("@loops-sync/schema");
      const { sql } = await import("kysely");
      const { openRuntime } = await import("../runtime.ts");
      const runtime = await openRuntime({ name: "replay", poolSize: 2 });
      try {
        const replayed = await runtime.sql.begin(async (tx) => {
          const before = await kyselyOver<Database>(tx)
            .selectFrom("sync.events as e")
            .leftJoin("sync.merchants as m", "m.id", "e.merchant_id")
            .select(["e.type", "e.merchant_id", "e.outcome"])
            .select(sql<boolean>`coalesce(m.status = 'revoked', false)`.as("revoked"))
            .where("e.id", "=", eventId)
            .forUpdate("e")
            .executeTakeFirst();
          if (!before) return undefined;
          await reopenEvents(tx, [eventId]);
          await enqueueJob(tx, {
            task: "process_events",
            payload: { eventIds: [eventId] },
            maxAttempts: PROCESS_EVENTS_MAX_ATTEMPTS,
          });
          return before;
        });
        if (!replayed) {
          throw new CliError(
            `replay: event ${eventId} is not in sync.events; fetch it with 'loops-sync catchup' or ask Loops to send it again with 'loops-sync redeliver ${eventId} --merchant mer_…'`,
            EXIT.problem,
          );
        }
        if (options.json) {
          printJson({
            eventId,
            type: replayed.type,
            merchantId: replayed.merchant_id,
            previousOutcome: replayed.outcome,
            outcome: "pending",
            queued: true,
            merchantRevoked: replayed.revoked,
          });
          return;
        }
        console.log(
          `replay: ${eventId} (${replayed.type}, ${replayed.merchant_id}) was ${replayed.outcome}; queued for the worker`,
        );
        if (replayed.revoked) {
          console.log(`replay: note that ${replayed.merchant_id} is revoked, so the worker will skip it`);
        }
      } finally {
        await runtime.close();
      }
    });
}
