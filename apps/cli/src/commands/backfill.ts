import { Command, Option } from "commander";
import { parseIsoDate, parseMerchantId } from "../flags.ts";
import { JSON_FLAG_HELP, printJson } from "../output.ts";
import { abortOnSignal, createRunProgress, quietLogger } from "./catchup.ts";

export function createBackfillCommand(): Command {
  return new Command("backfill")
    .description(
      "copy a merchant's orders from GET /orders?updated_since=… into the replica (version-gated, resumable); for a new merchant, history older than 30 days, or an outage past the event retention",
    )
    .addOption(
      new Option("--merchant <id>", "the merchant to backfill, e.g. mer_abc123")
        .argParser(parseMerchantId)
        .makeOptionMandatory(),
    )
    .addOption(
      new Option(
        "--since <iso>",
        "orders updated at or after this ISO 8601 time, e.g. 2026-11-01T00:00:00Z (default: the last run's watermark, else all history)",
      ).argParser(parseIsoDate),
    )
    .addOption(new Option("--json", JSON_FLAG_HELP))
    .action(async (options: { merchant: string; since?: string; json?: boolean }) => {
      const { runBackfill } = await import("@loops-sync/catchup");
      const { API_VARIABLES, createLoopsClientFromEnv } = await import("../clients.ts");
      const { openRuntime } = await import("../runtime.ts");
      const runtime = await openRuntime({ name: "backfill", require: API_VARIABLES, tracing: true });
      const progress = createRunProgress("orders");
      const abort = abortOnSignal();
      try {
        const logger = quietLogger(runtime.logger, "backfill");
        const result = await runBackfill({
          sql: runtime.sql,
          client: createLoopsClientFromEnv(runtime.env, logger, { databaseUrl: runtime.databaseUrl }),
          merchantId: options.merchant,
          ...(options.since ? { since: options.since } : {}),
          signal: abort.signal,
          logger,
          onProgress: (p) => progress.update(p.merchantId, p.ordersSeen, p.fraction),
        }).catch((error: unknown) => {
          throw abort.signal.aborted ? abort.signal.reason : error;
        });
        progress.stop();
        if (options.json) {
          printJson(result);
          return;
        }
        console.log(
          `backfill ${result.merchantId}: ${result.resumed ? "resumed, " : ""}${result.pages} page(s), ` +
            `${result.ordersSeen} orders listed since ${result.since ?? "the beginning"}, ${result.ordersChanged} changed` +
            `${result.ordersInvalid > 0 ? `, ${result.ordersInvalid} not storable (see the log)` : ""}; ` +
            `${result.apiCalls} API calls; next run starts at ${result.watermark ?? "the beginning"}`,
        );
      } finally {
        progress.stop();
        abort.dispose();
        await runtime.close();
      }
    });
}
