import type { Database } from "@loops-sync/schema";
import { Argument, Command, Option } from "commander";
import { CliError, EXIT } from "../cli-error.ts";
import { parseEventId, parseMerchantId } from "../flags.ts";
import { JSON_FLAG_HELP, printJson } from "../output.ts";

/** Asks Loops to send an event to the webhook endpoints again (POST /events/{id}/redeliver). */
export function createRedeliverCommand(): Command {
  return new Command("redeliver")
    .description("ask Loops to send an event to your webhook endpoints again (kept upstream for 30 days)")
    .addArgument(new Argument("<event-id>", "the event, e.g. evt_abc123").argParser(parseEventId))
    .addOption(
      new Option(
        "--merchant <id>",
        "the event's merchant, e.g. mer_abc123 (default: read from sync.events; needed when the event was never stored)",
      ).argParser(parseMerchantId),
    )
    .addOption(new Option("--json", JSON_FLAG_HELP))
    .action(async (eventId: string, options: { merchant?: string; json?: boolean }) => {
      const { kyselyOver } = await import("@loops-sync/schema");
      const { API_VARIABLES, createLoopsClientFromEnv } = await import("../clients.ts");
      const { openRuntime } = await import("../runtime.ts");
      const runtime = await openRuntime({
        name: "redeliver",
        require: API_VARIABLES,
        poolSize: 2,
        tracing: true,
      });
      try {
        let merchantId = options.merchant;
        if (!merchantId) {
          const row = await kyselyOver<Database>(runtime.sql)
            .selectFrom("sync.events")
            .select("merchant_id")
            .where("id", "=", eventId)
            .executeTakeFirst();
          merchantId = row?.merchant_id;
        }
        if (!merchantId) {
          throw new CliError(
            `redeliver: event ${eventId} is not in sync.events, so its merchant is unknown; pass --merchant mer_… to name it`,
            EXIT.usage,
          );
        }
        const client = createLoopsClientFromEnv(runtime.env, runtime.logger.child({ name: "loops-client" }), {
          databaseUrl: runtime.databaseUrl,
        });
        await client.forMerchant(merchantId).events.redeliver(eventId);
        if (options.json) {
          printJson({ eventId, merchantId, queued: true });
          return;
        }
        console.log(
          `redeliver: Loops queued ${eventId} (${merchantId}) for delivery to your webhook endpoints again`,
        );
      } finally {
        await runtime.close();
      }
    });
}
