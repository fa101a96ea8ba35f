import type { ReconcileRun } from "@loops-sync/worker";
import { Command, Option } from "commander";
import { CliError, EXIT } from "../cli-error.ts";
import { parseMerchantId } from "../flags.ts";
import { JSON_FLAG_HELP, printJson, throwIfRefused } from "../output.ts";
import { abortOnSignal, quietLogger } from "./catchup.ts";

function printRefresh(result: ReconcileRun): void {
  for (const m of result.merchants) {
    const changed = Object.entries(m.changed)
      .filter(([, n]) => n > 0)
      .map(([resource, n]) => `${n} ${resource}`);
    console.log(
      `refresh ${m.merchantId}: ${m.status}; ${m.apiCalls} API calls; changed: ${changed.join(", ") || "nothing"}` +
        `${m.setAside.length > 0 ? `; set aside (Loops refused the scope): ${m.setAside.join(", ")}` : ""}` +
        `${m.error ? `; error: ${m.error}` : ""}`,
    );
  }
  console.log(
    `refresh: ${result.merchants.length} merchant(s), ${result.failed.length} failed, ${result.apiCalls} API calls`,
  );
}

export function createRefreshCommand(): Command {
  return new Command("refresh")
    .description(
      "reconcile now: read every mirrored resource of each active merchant (merchant, connection, locations, channel connections, brands, menus, jobs in progress) and the channel catalog, writing only what changed, and retrying resources set aside because Loops refused their scope; the worker does the same at start and on RECONCILE_CRON",
    )
    .addOption(
      new Option(
        "--merchant <id>",
        "only this merchant, e.g. mer_abc123 (default: every active merchant)",
      ).argParser(parseMerchantId),
    )
    .addOption(new Option("--json", JSON_FLAG_HELP))
    .action(async (options: { merchant?: string; json?: boolean }) => {
      const { runReconcile } = await import("@loops-sync/worker");
      const { API_VARIABLES, createLoopsClientFromEnv } = await import("../clients.ts");
      const { openRuntime } = await import("../runtime.ts");
      const runtime = await openRuntime({ name: "refresh", require: API_VARIABLES });
      const abort = abortOnSignal();
      try {
        const logger = quietLogger(runtime.logger, "refresh");
        const result = await runReconcile({
          sql: runtime.sql,
          client: createLoopsClientFromEnv(runtime.env, logger, { databaseUrl: runtime.databaseUrl }),
          merchantId: options.merchant,
          merchantIds: runtime.env.LOOPS_MERCHANT_IDS,
          // An operator who granted a scope runs refresh to have it read at once.
          retrySetAside: true,
          signal: abort.signal,
          logger,
        }).catch((error: unknown) => {
          throw abort.signal.aborted ? abort.signal.reason : error;
        });
        if (options.json) printJson(result);
        else printRefresh(result);
        throwIfRefused("refresh", result.merchants);
        if (result.failed.length > 0) {
          throw new CliError(
            `refresh failed for ${result.failed.join(", ")} (see the error above); run it again once the cause is fixed`,
            EXIT.problem,
          );
        }
      } finally {
        abort.dispose();
        await runtime.close();
      }
    });
}
