import { CHANGE_RESOURCES } from "@loops-sync/schema/change-feed";
import { Command, Option } from "commander";
import { CliError, EXIT } from "../cli-error.ts";
import { parseIsoDate } from "../flags.ts";
import { JSON_FLAG_HELP, printJson } from "../output.ts";

/** How many positions the human output lists before it says "and N more". */
const LISTED = 20;

/** `loops-sync forward retry`: changes waiting for a retry (and, with --dead, dead ones) are sent again now. */
function createForwardRetryCommand(): Command {
  return new Command("retry")
    .description(
      "send again now the changes waiting out a retry backoff; with --dead, the dead ones too (their FORWARD_MAX_AGE_HOURS counts from now)",
    )
    .addOption(new Option("--dead", "also the dead changes (listed by `loops-sync status`)"))
    .addOption(new Option("--json", JSON_FLAG_HELP))
    .action(async (options: { dead?: boolean; json?: boolean }) => {
      const { retryDeliveries } = await import("@loops-sync/worker");
      const { openRuntime } = await import("../runtime.ts");
      const runtime = await openRuntime({ name: "forward", poolSize: 2 });
      try {
        const { retried: positions, superseded } = await retryDeliveries(runtime.sql, {
          dead: options.dead === true,
        });
        if (options.json) {
          printJson({ retried: positions.length, positions, dead: options.dead === true, superseded });
          return;
        }
        if (superseded.length > 0) {
          const listed = superseded.slice(0, LISTED).map((p) => `chg_${p}`);
          const more = superseded.length > LISTED ? ` and ${superseded.length - LISTED} more` : "";
          console.log(
            `forward retry: ${superseded.length} dead change(s) dropped, superseded by a newer change of the same resource already sent: ${listed.join(", ")}${more}`,
          );
        }
        if (positions.length === 0) {
          console.log(
            options.dead
              ? "forward retry: nothing to send again (no dead or waiting change)"
              : "forward retry: no change is waiting for a retry (dead ones need --dead)",
          );
          return;
        }
        const listed = positions.slice(0, LISTED).map((p) => `chg_${p}`);
        const more = positions.length > LISTED ? ` and ${positions.length - LISTED} more` : "";
        console.log(
          `forward retry: ${positions.length} change(s) due now: ${listed.join(", ")}${more}; a running worker sends them`,
        );
      } finally {
        await runtime.close();
      }
    });
}

interface RecoverOptions {
  since: string;
  until?: string;
  resource?: string;
  json?: boolean;
}

/** `loops-sync forward recover`: the kept changes of a window are sent again, in order per resource. */
function createForwardRecoverCommand(): Command {
  return new Command("recover")
    .description(
      "send again the kept changes committed in a window (e.g. after your endpoint lost data); in order per resource, a running worker sends them",
    )
    .addOption(
      new Option("--since <iso>", "changes committed at or after this time (required)")
        .argParser(parseIsoDate)
        .makeOptionMandatory(),
    )
    .addOption(new Option("--until <iso>", "and before this time (default: now)").argParser(parseIsoDate))
    .addOption(new Option("--resource <resource>", "only changes of this resource").choices(CHANGE_RESOURCES))
    .addOption(new Option("--json", JSON_FLAG_HELP))
    .action(async (options: RecoverOptions) => {
      const since = new Date(options.since);
      const until = options.until === undefined ? undefined : new Date(options.until);
      if (until && until <= since) {
        throw new CliError(
          `forward recover: --until ${options.until} is not after --since ${options.since}; give an --until later than --since, or leave it out (now)`,
          EXIT.usage,
        );
      }
      if (since.getTime() > Date.now()) {
        throw new CliError(
          `forward recover: --since ${options.since} is in the future; give the time your endpoint's data went missing`,
          EXIT.usage,
        );
      }
      const { recoverDeliveries } = await import("@loops-sync/worker");
      const { openRuntime } = await import("../runtime.ts");
      const runtime = await openRuntime({ name: "forward", poolSize: 2 });
      try {
        const env = runtime.env;
        const resources = options.resource ? [options.resource] : env.FORWARD_RESOURCES;
        const result = await recoverDeliveries(runtime.sql, {
          since,
          ...(until ? { until } : {}),
          resources,
        });
        if ("reason" in result) {
          if (result.reason === "never_forwarded") {
            throw new CliError(
              "forward recover: forwarding was never turned on here (no worker had FORWARD_URL), so there is nothing to send again",
              EXIT.problem,
            );
          }
          const oldest = result.oldestKeptAt?.toISOString();
          throw new CliError(
            oldest
              ? `forward recover: --since ${options.since} is older than what prune kept (RETENTION_DAYS): the oldest change kept was committed at ${oldest}; give --since ${oldest} or later`
              : `forward recover: --since ${options.since}: prune removed every change of the window (RETENTION_DAYS) and none is kept; nothing can be sent again`,
            EXIT.problem,
          );
        }
        const { positions } = result;
        if (options.json) {
          printJson({
            recovered: positions.length,
            positions,
            since: options.since,
            until: options.until ?? null,
            resources,
          });
          return;
        }
        if (positions.length === 0) {
          console.log("forward recover: no kept change was committed in that window; nothing to send again");
          return;
        }
        const listed = positions.slice(0, LISTED).map((p) => `chg_${p}`);
        const more = positions.length > LISTED ? ` and ${positions.length - LISTED} more` : "";
        console.log(
          `forward recover: ${positions.length} change(s) due again: ${listed.join(", ")}${more}; a running worker sends them in order per resource`,
        );
      } finally {
        await runtime.close();
      }
    });
}

/** `loops-sync forward …`: forwarding to FORWARD_URL. */
export function createForwardCommand(): Command {
  return new Command("forward")
    .description(
      "forwarding of the change feed to FORWARD_URL (see `forward retry --help`, `forward recover --help`)",
    )
    .addCommand(createForwardRetryCommand())
    .addCommand(createForwardRecoverCommand());
}
