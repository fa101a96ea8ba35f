import { Command, InvalidArgumentError, Option } from "commander";
import { CliError } from "../cli-error.ts";
import { parseMerchantId } from "../flags.ts";
import { JSON_FLAG_HELP, printJson } from "../output.ts";

/** Merchants asked of Loops by default: about two seconds of the default budget (25/s), two calls each. */
export const DEFAULT_SAMPLE = 20;

function parseSample(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw new InvalidArgumentError(
      `expected a whole number of merchants, 1 or more, got ${JSON.stringify(value)}`,
    );
  }
  return n;
}

export function createDoctorCommand(): Command {
  return new Command("doctor")
    .description(
      "checks what goes wrong between the sandbox and production, naming the fix for each: the environment, Postgres and its schema, a token from the client credentials, each merchant's connection, scopes and event log, the webhook secrets, Loops' clock against ours, the forwarding endpoint, the last webhook received",
    )
    .addOption(new Option("--json", JSON_FLAG_HELP))
    .addOption(
      new Option("--merchant <id>", "check only this merchant, e.g. mer_abc123").argParser(parseMerchantId),
    )
    .addOption(
      new Option(
        "--sample <n>",
        "ask Loops about at most this many merchants (configured first, then at random)",
      )
        .argParser(parseSample)
        .default(DEFAULT_SAMPLE),
    )
    .action(async (options: { json?: boolean; merchant?: string; sample: number }) => {
      const { printDoctorReport, progressLine } = await import("../doctor/print-doctor-report.ts");
      const { runDoctor } = await import("../doctor/run-doctor.ts");
      const report = await runDoctor({
        source: process.env,
        merchant: options.merchant,
        sample: options.sample,
        onProgress: progressLine(),
      });
      if (options.json) printJson(report);
      else printDoctorReport(report);
      if (report.exitCode !== 0) {
        const failed = report.checks.filter((c) => c.status === "fail").map((c) => c.check);
        throw new CliError(
          `doctor: ${failed.length} check(s) failed (${[...new Set(failed)].join(", ")}); each names its fix above`,
          report.exitCode as CliError["exitCode"],
        );
      }
    });
}
