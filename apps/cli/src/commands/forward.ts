import { retryDeliveries } from "@loops-sync/worker";
import { Command, Option } from "commander";
import { JSON_FLAG_HELP, printJson } from "../output.ts";
import { openRuntime } from "../runtime.ts";

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
      const runtime = await openRuntime({ name: "forward", poolSize: 2 });
      try {
        const positions = await retryDeliveries(runtime.sql, { dead: options.dead === true });
        if (options.json) {
          printJson({ retried: positions.length, positions, dead: options.dead === true });
          return;
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

/** `loops-sync forward …`: forwarding to FORWARD_URL. */
export function createForwardCommand(): Command {
  return new Command("forward")
    .description("forwarding of the change feed to FORWARD_URL (see `forward retry --help`)")
    .addCommand(createForwardRetryCommand());
}
