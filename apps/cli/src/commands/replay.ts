import { enqueueJob } from "@loops-sync/replica";
import { type Database, kyselyOver } from "@loops-sync/schema";
import { Argument, Command, Option } from "commander";
import { sql } from "kysely";
import { CliError, EXIT } from "../cli-error.ts";
import { parseEventId } from "../flags.ts";
import { JSON_FLAG_HELP, printJson } from "../output.ts";
import { openRuntime } from "../runtime.ts";

/**
 * Puts a stored event back to `pending` and adds a process_events job for it, in one transaction, so the
 * worker dispatches it again as if it had just arrived (order events whose version the replica already holds
 * are settled as stale without a call).
 */
export function createReplayCommand(): Command {
  return new Command("replay")
    .description(
      "re-apply an event already stored in sync.events: reset its outcome to pending and queue it for the worker",
    )
    .addArgument(new Argument("<event-id>", "the stored event, e.g. evt_abc123").argParser(parseEventId))
    .addOption(new Option("--json", JSON_FLAG_HELP))
    .action(async (eventId: string, options: { json?: boolean }) => {
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
          await tx`update sync.events set outcome = 'pending', error = null, outcome_at = null where id = ${eventId}`;
          // graphile-worker's default attempts, as the inbox gives process_events.
          await enqueueJob(tx, { task: "process_events", payload: { eventIds: [eventId] }, maxAttempts: 25 });
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
