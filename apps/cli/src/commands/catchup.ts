import type { CatchupResult } from "@loops-sync/catchup";
import type { Logger } from "@loops-sync/config";
import { SingleBar } from "cli-progress";
import { Command, Option } from "commander";
import { CliError, EXIT } from "../cli-error.ts";
import { parseMerchantId } from "../flags.ts";
import { JSON_FLAG_HELP, printJson, throwIfRefused } from "../output.ts";

/**
 * A progress display for long runs: on a terminal, a bar with the count, rate and ETA (on stderr, so stdout
 * keeps the summary for scripts); elsewhere nothing until the plain summary.
 */
export interface RunProgress {
  /** `fraction` (0–1) drives the bar and ETA; undefined when the extent is unknown. */
  update(label: string, count: number, fraction: number | undefined): void;
  stop(): void;
}

export function createRunProgress(unit: string, stream: NodeJS.WriteStream = process.stderr): RunProgress {
  if (!stream.isTTY) return { update() {}, stop() {} };
  const bar = new SingleBar({
    format: `{label} [{bar}] {percentage}% | {count} ${unit} | {rate}/s | ETA {etaText}`,
    stream,
    hideCursor: true,
  });
  const started = Date.now();
  let running = false;
  return {
    update(label, count, fraction) {
      const seconds = Math.max((Date.now() - started) / 1000, 0.001);
      // Our own ETA from the share done so far: cli-progress's shows "NF" while the share is still 0.
      const eta =
        fraction !== undefined && fraction > 0.005
          ? formatDuration((seconds * (1 - fraction)) / fraction)
          : "n/a";
      const payload = { label, count, rate: Math.round(count / seconds), etaText: eta };
      const value = Math.round((fraction ?? 0) * 1000);
      if (!running) {
        bar.start(1000, value, payload);
        running = true;
      } else bar.update(value, payload);
    },
    stop() {
      if (running) bar.stop();
      running = false;
    },
  };
}

function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** Aborts on the first Ctrl-C or SIGTERM, so a run stops between calls and keeps its checkpoint. */
export function abortOnSignal(): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onSignal = () =>
    controller.abort(new CliError("interrupted; run the command again to resume", EXIT.interrupted));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  return {
    signal: controller.signal,
    dispose() {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}

/** The run's log lines: warnings and up unless LOG_LEVEL asks for more, so the summary stays readable. */
export function quietLogger(logger: Logger, name: string): Logger {
  const level = logger.level === "info" ? "warn" : logger.level;
  return logger.child({ name }, { level });
}

function printSummary(result: CatchupResult): void {
  for (const m of result.merchants) {
    const parts = [
      `${m.merchantId}: ${m.status}`,
      `${m.eventsRead} events read, ${m.eventsStored} new`,
      `${m.eventsSettled} settled from ${m.listPages} order list page(s)`,
      `${m.apiCalls} API calls`,
    ];
    if (m.backfill)
      parts.push(`backfill: ${m.backfill.ordersSeen} orders listed, ${m.backfill.ordersChanged} changed`);
    if (m.error) parts.push(`error: ${m.error}`);
    console.log(`catchup ${parts.join("; ")}`);
    if (m.status === "cursor_expired") {
      console.log(
        `catchup ${m.merchantId}: the cursor was older than the 30-day event retention; orders were backfilled instead (see docs/runbook.md)`,
      );
    }
  }
  const perEvent = result.callsPerStoredEvent === null ? "n/a" : result.callsPerStoredEvent.toFixed(3);
  console.log(
    `catchup: ${result.merchants.length} merchant(s), ${result.eventsStored} new events, ${result.apiCalls} API calls, ${perEvent} calls per new event`,
  );
}

export function createCatchupCommand(): Command {
  return new Command("catchup")
    .description(
      "read missed events from GET /events after each merchant's cursor and queue their work; falls back to a backfill when the cursor is past the 30-day retention",
    )
    .addOption(
      new Option(
        "--merchant <id>",
        "only this merchant, e.g. mer_abc123 (default: every active merchant)",
      ).argParser(parseMerchantId),
    )
    .addOption(new Option("--json", JSON_FLAG_HELP))
    .action(async (options: { merchant?: string; json?: boolean }) => {
      const { runCatchup } = await import("@loops-sync/catchup");
      const { API_VARIABLES, createLoopsClientFromEnv } = await import("../clients.ts");
      const { openRuntime } = await import("../runtime.ts");
      const runtime = await openRuntime({ name: "catchup", require: API_VARIABLES, tracing: true });
      const progress = createRunProgress("events");
      const abort = abortOnSignal();
      try {
        const logger = quietLogger(runtime.logger, "catchup");
        const result = await runCatchup({
          sql: runtime.sql,
          client: createLoopsClientFromEnv(runtime.env, logger, { databaseUrl: runtime.databaseUrl }),
          applicationId: runtime.env.LOOPS_APPLICATION_ID,
          merchantIds: runtime.env.LOOPS_MERCHANT_IDS,
          merchantId: options.merchant,
          // The operator asked for a catch-up now: a merchant paused by a 429 is waited for, not skipped.
          waitWhenPaused: true,
          signal: abort.signal,
          logger,
          onProgress: (p) => progress.update(p.merchantId, p.eventsRead, p.fraction),
        }).catch((error: unknown) => {
          throw abort.signal.aborted ? abort.signal.reason : error;
        });
        progress.stop();
        if (options.json) printJson(result);
        else printSummary(result);
        throwIfRefused("catchup", result.merchants);
        if (result.failed.length > 0) {
          throw new CliError(
            `catch-up failed for ${result.failed.join(", ")}; its cursor keeps what was stored, run it again to resume`,
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
