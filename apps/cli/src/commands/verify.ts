import type { describeDifference as DescribeDifference, VerifyResult } from "@loops-sync/catchup";
import { Command, Option } from "commander";
import { CliError, EXIT } from "../cli-error.ts";
import { parseMerchantId } from "../flags.ts";
import { JSON_FLAG_HELP, printJson, throwIfRefused } from "../output.ts";
import { abortOnSignal, createRunProgress, quietLogger } from "./catchup.ts";

function printVerify(
  result: VerifyResult,
  repair: boolean,
  describeDifference: typeof DescribeDifference,
): void {
  for (const d of result.differences) console.log(describeDifference(d));
  for (const m of result.merchants) {
    console.log(
      `verify ${m.merchantId}: ${m.ordersUpstream} orders upstream, ${m.differences.length} difference(s)` +
        `${repair ? `, ${m.repaired} repaired` : ""}` +
        `${m.unconfirmed > 0 ? `, ${m.unconfirmed} unconfirmed (applied from events, confirmed by the worker)` : ""}` +
        `${m.error ? `; not verified: ${m.error}` : ""}`,
    );
  }
}

export function createVerifyCommand(): Command {
  return new Command("verify")
    .description(
      "compare replica.orders with the upstream order list (id, version, status) and list every difference; exit 1 when any remains",
    )
    .addOption(
      new Option(
        "--merchant <id>",
        "only this merchant, e.g. mer_abc123 (default: every active merchant)",
      ).argParser(parseMerchantId),
    )
    .addOption(new Option("--repair", "fix each difference with the upstream copy (version-gated)"))
    .addOption(new Option("--json", JSON_FLAG_HELP))
    .action(async (options: { merchant?: string; repair?: boolean; json?: boolean }) => {
      const { describeDifference, verifyReplica } = await import("@loops-sync/catchup");
      const { API_VARIABLES, createLoopsClientFromEnv } = await import("../clients.ts");
      const { openRuntime } = await import("../runtime.ts");
      const runtime = await openRuntime({ name: "verify", require: API_VARIABLES, tracing: true });
      const progress = createRunProgress("orders");
      const abort = abortOnSignal();
      try {
        const logger = quietLogger(runtime.logger, "verify");
        const result = await verifyReplica({
          sql: runtime.sql,
          client: createLoopsClientFromEnv(runtime.env, logger, { databaseUrl: runtime.databaseUrl }),
          merchantId: options.merchant,
          merchantIds: runtime.env.LOOPS_MERCHANT_IDS,
          repair: options.repair ?? false,
          signal: abort.signal,
          logger,
          onProgress: (p) => progress.update(p.merchantId, p.ordersChecked, undefined),
        }).catch((error: unknown) => {
          throw abort.signal.aborted ? abort.signal.reason : error;
        });
        progress.stop();
        if (options.json) printJson(result);
        else printVerify(result, options.repair ?? false, describeDifference);
        throwIfRefused("verify", result.merchants);
        if (result.remaining > 0) {
          throw new CliError(
            options.repair
              ? `verify: ${result.remaining} difference(s) remain after --repair (see the lines above)`
              : `verify: ${result.remaining} difference(s); run with --repair to fix them`,
            EXIT.problem,
          );
        }
      } finally {
        progress.stop();
        abort.dispose();
        await runtime.close();
      }
    });
}
