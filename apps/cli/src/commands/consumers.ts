import type { Sql } from "@loops-sync/db";
import type { ChangeResource } from "@loops-sync/schema";
import { CHANGE_RESOURCES, CONSUMER_NAME_PATTERN } from "@loops-sync/schema/change-feed";
import type { ConsumerStatus } from "@loops-sync/status";
import { Argument, Command, InvalidArgumentError, Option } from "commander";
import { CliError, EXIT } from "../cli-error.ts";
import { parseCount, parseIsoDate, parseMerchantId } from "../flags.ts";
import { JSON_FLAG_HELP, printJson } from "../output.ts";

/** A consumer name as replica.create_consumer takes it. */
function parseConsumerName(value: string): string {
  if (!CONSUMER_NAME_PATTERN.test(value)) {
    throw new InvalidArgumentError(
      `expected a consumer name of 1-63 letters, digits, _ . : - (starting with a letter or digit), got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function parseResource(value: string, previous: ChangeResource[] = []): ChangeResource[] {
  if (!(CHANGE_RESOURCES as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(
      `expected one of ${CHANGE_RESOURCES.join(", ")}, got ${JSON.stringify(value)}`,
    );
  }
  return [...previous, value as ChangeResource];
}

const collectMerchant = (value: string, previous: string[] = []): string[] => [
  ...previous,
  parseMerchantId(value),
];

// Each verb's flags, declared and parsed in one place (a fresh instance per verb: commander owns them).
const nameArgument = () => new Argument("<name>", "the consumer's name").argParser(parseConsumerName);
const jsonOption = () => new Option("--json", JSON_FLAG_HELP);

/**
 * The consumer functions' refusals as CLI errors: a name or position that does not fit is exit 2 naming the
 * fix, an expired position exit 1 (as `changes`), anything else goes on up.
 */
function asCliError(verb: string, error: unknown): unknown {
  const e = error as { code?: string; message?: string; hint?: string };
  const line = `consumers ${verb}: ${e.message ?? String(error)}${e.hint ? ` (${e.hint})` : ""}`;
  if (e.code === "42704" || e.code === "42710" || e.code === "22023") return new CliError(line, EXIT.usage);
  if (e.code === "LS410") return new CliError(line, EXIT.problem);
  return error;
}

/** Status reads of the feed consumers, loaded with the command that runs, not with `--help`. */
async function readConsumers(sql: Sql): Promise<ConsumerStatus[]> {
  const status = await import("@loops-sync/status");
  return status.readConsumers(sql);
}

async function withRuntime<T>(verb: string, run: (sql: Sql) => Promise<T>): Promise<T> {
  const { openRuntime } = await import("../runtime.ts");
  // Only `list` reads; add, remove and reset write, so a standby refuses them naming the primary.
  const runtime = await openRuntime({ name: `consumers ${verb}`, poolSize: 1, readOnly: verb === "list" });
  try {
    return await run(runtime.sql).catch((error: unknown) => {
      throw asCliError(verb, error);
    });
  } finally {
    await runtime.close();
  }
}

function describeConsumer(c: ConsumerStatus): string {
  const filter = [
    c.resources ? c.resources.join(",") : "every resource",
    c.merchantIds ? c.merchantIds.join(",") : "every merchant",
  ].join("; ");
  return (
    `${c.name} (${filter}): acknowledged through ${c.ackedThrough}; lag ${c.lagChanges} change(s), ` +
    `${Math.round(c.lagSeconds)} s; ${c.leased} leased; last receive ${c.lastReceiveAt ?? "never"}`
  );
}

async function readOne(sql: Sql, name: string): Promise<ConsumerStatus> {
  const found = (await readConsumers(sql)).find((c) => c.name === name);
  if (!found)
    throw new CliError(`consumers: no feed consumer named ${name} (see consumers list)`, EXIT.usage);
  return found;
}

function createListCommand(): Command {
  return new Command("list")
    .description("list the feed consumers with their filter, position and lag (in changes and seconds)")
    .addOption(jsonOption())
    .action(async (options: { json?: boolean }) => {
      const consumers = await withRuntime("list", readConsumers);
      if (options.json) printJson({ consumers });
      else if (consumers.length === 0)
        console.log("no feed consumers (add one with `loops-sync consumers add NAME`)");
      else for (const c of consumers) console.log(describeConsumer(c));
    });
}

function createAddCommand(): Command {
  return new Command("add")
    .description(
      "create a named feed consumer (replica.create_consumer) that several instances of a backend share; it starts at the head unless --after or --from-start",
    )
    .addArgument(nameArgument())
    .addOption(
      new Option("--resource <resource>", "only changes of this resource (repeatable)").argParser(
        parseResource,
      ),
    )
    .addOption(
      new Option("--merchant <id>", "only this merchant's changes (repeatable)").argParser(collectMerchant),
    )
    .addOption(new Option("--after <position>", "start after this position").argParser(parseCount))
    .addOption(new Option("--from-start", "start from the oldest kept change").conflicts("after"))
    .addOption(jsonOption())
    .action(
      async (
        name: string,
        options: {
          resource?: ChangeResource[];
          merchant?: string[];
          after?: number;
          fromStart?: boolean;
          json?: boolean;
        },
      ) => {
        const after = options.fromStart ? 0 : (options.after ?? null);
        const result = await withRuntime("add", async (sql) => {
          const { createConsumer } = await import("@loops-sync/db");
          const created = await createConsumer(sql, name, {
            resources: options.resource,
            merchantIds: options.merchant,
            after,
          });
          return { created, consumer: await readOne(sql, name) };
        });
        if (options.json) printJson(result);
        else
          console.log(
            `${result.created ? "created" : "already there, same filter:"} ${describeConsumer(result.consumer)}`,
          );
      },
    );
}

function createRemoveCommand(): Command {
  return new Command("remove")
    .description(
      "drop a feed consumer and its leases (replica.drop_consumer); prune no longer keeps changes for it",
    )
    .addArgument(nameArgument())
    .addOption(jsonOption())
    .action(async (name: string, options: { json?: boolean }) => {
      const removed = await withRuntime("remove", async (sql) => {
        const { dropConsumer } = await import("@loops-sync/db");
        return dropConsumer(sql, name);
      });
      if (!removed)
        throw new CliError(
          `consumers remove: no feed consumer named ${name} (see consumers list)`,
          EXIT.usage,
        );
      if (options.json) printJson({ removed: name });
      else console.log(`removed feed consumer ${name}`);
    });
}

function createResetCommand(): Command {
  return new Command("reset")
    .description(
      "move a feed consumer so it hands out again every change after a position (--to) or written since a time (--since), forgetting its leases",
    )
    .addArgument(nameArgument())
    .addOption(
      new Option("--since <iso>", "hand out again the changes written at or after this time").argParser(
        parseIsoDate,
      ),
    )
    .addOption(
      new Option("--to <position>", "acknowledged through this position: what follows it comes again")
        .argParser(parseCount)
        .conflicts("since"),
    )
    .addOption(jsonOption())
    .action(async (name: string, options: { since?: string; to?: number; json?: boolean }) => {
      if (options.since === undefined && options.to === undefined) {
        throw new CliError(
          "consumers reset: give --since ISO or --to POSITION (see consumers reset --help)",
          EXIT.usage,
        );
      }
      const consumer = await withRuntime("reset", async (sql) => {
        const { resetConsumer } = await import("@loops-sync/db");
        await resetConsumer(
          sql,
          name,
          options.since !== undefined ? { since: options.since } : { to: options.to! },
        );
        return readOne(sql, name);
      });
      if (options.json) printJson({ consumer });
      else console.log(`reset: ${describeConsumer(consumer)}`);
    });
}

/** `loops-sync consumers list|add|remove|reset`: the feed consumers kept by Postgres. */
export function createConsumersCommand(): Command {
  return new Command("consumers")
    .description("feed consumers: named cursors kept by Postgres that several instances of a backend share")
    .addCommand(createListCommand())
    .addCommand(createAddCommand())
    .addCommand(createRemoveCommand())
    .addCommand(createResetCommand());
}
