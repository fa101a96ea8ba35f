import type { Change, ChangeResource } from "@loops-sync/schema";
import { CHANGE_RESOURCES } from "@loops-sync/schema/change-feed";
import { Command, InvalidArgumentError, Option } from "commander";
import { CliError, EXIT } from "../cli-error.ts";
import { parseCount, parseMerchantId } from "../flags.ts";
import { abortOnSignal } from "./catchup.ts";

/** Changes printed without --follow when --limit is not given. */
export const DEFAULT_CHANGES_PRINTED = 100;

const RESOURCES: readonly ChangeResource[] = CHANGE_RESOURCES;

interface ChangesOptions {
  after: number;
  limit?: number;
  follow?: boolean;
  merchant?: string;
  resource?: ChangeResource;
  json?: boolean;
}

/** `--limit 50`: a whole number of 1 or more. */
function parseLimit(value: string): number {
  const n = parseCount(value);
  if (n < 1)
    throw new InvalidArgumentError(`expected a whole number of 1 or more, got ${JSON.stringify(value)}`);
  return n;
}

/** One readable line: `#42 2026-11-26T10:00:00.000Z order ord_1 mer_1 update v1→v2 placed→accepted (webhook evt_9)`. */
export function describeChange(c: Change): string {
  const parts = [`#${c.position}`, c.changed_at.toISOString(), c.resource, c.resource_id];
  if (c.merchant_id) parts.push(c.merchant_id);
  parts.push(c.operation);
  if (c.version !== null)
    parts.push(c.previous_version === null ? `v${c.version}` : `v${c.previous_version}→v${c.version}`);
  if (c.status !== null)
    parts.push(c.previous_status === null ? c.status : `${c.previous_status}→${c.status}`);
  parts.push(c.event_id ? `(${c.source} ${c.event_id})` : `(${c.source})`);
  return parts.join(" ");
}

/** Writes one line, waiting for the pipe to drain so a long read never piles up in memory. */
async function writeLine(line: string): Promise<void> {
  if (!process.stdout.write(`${line}\n`)) {
    await new Promise<void>((resolve) => process.stdout.once("drain", resolve));
  }
}

export function createChangesCommand(): Command {
  return new Command("changes")
    .description(
      "print the change feed (replica.read_changes): every committed change of a mirrored row, in position order; --follow waits for new ones",
    )
    .addOption(
      new Option("--after <position>", "print changes after this position (0: from the oldest retained)")
        .argParser(parseCount)
        .default(0),
    )
    .addOption(
      new Option(
        "--limit <n>",
        `print at most n changes, then stop (default: ${DEFAULT_CHANGES_PRINTED}; with --follow: no limit)`,
      ).argParser(parseLimit),
    )
    .addOption(new Option("--follow", "keep printing changes as they commit, until Ctrl-C (exit 130)"))
    .addOption(new Option("--merchant <id>", "only this merchant's changes").argParser(parseMerchantId))
    .addOption(new Option("--resource <resource>", "only changes of this resource").choices(RESOURCES))
    .addOption(
      new Option("--json", "print one JSON object per change and line (NDJSON; shape in docs/cli.md)"),
    )
    .addHelpText(
      "after",
      `
Positions are the cursor: continue with --after <last position printed>. A cursor older than what prune
removed (RETENTION_DAYS) fails with changes_expired and exit 1: resynchronise from the replica tables, then
read on after the position the error names.`,
    )
    .action(async (options: ChangesOptions) => {
      const { ChangesExpiredError, followChanges, readChanges } = await import("@loops-sync/schema");
      const { openRuntime } = await import("../runtime.ts");
      const runtime = await openRuntime({ name: "changes", poolSize: 2, readOnly: true });
      const abort = abortOnSignal();
      const limit = options.limit ?? (options.follow ? Number.POSITIVE_INFINITY : DEFAULT_CHANGES_PRINTED);
      // Filtered in the database (read_changes' resources and merchant_ids), not by reading everything here.
      const filter = {
        resources: options.resource ? [options.resource] : undefined,
        merchantIds: options.merchant ? [options.merchant] : undefined,
      };
      let printed = 0;
      let last = options.after;
      const print = async (c: Change) => {
        await writeLine(options.json ? JSON.stringify(c) : describeChange(c));
        printed++;
        last = c.position;
      };
      try {
        if (options.follow) {
          const following = followChanges(runtime.sql, {
            after: options.after,
            ...filter,
            signal: abort.signal,
            // Only the code: the message of a connection error may name the host.
            onRetry: (error) =>
              runtime.logger.warn(
                { code: (error as { code?: string }).code },
                "changes: lost Postgres; retrying",
              ),
          });
          for await (const c of following) {
            await print(c);
            if (printed >= limit) break;
          }
          if (abort.signal.aborted) {
            throw new CliError(`interrupted; resume with --after ${last}`, EXIT.interrupted);
          }
          return;
        }
        let cursor = options.after;
        for (;;) {
          const page = await readChanges(runtime.sql, { after: cursor, limit: 1000, ...filter });
          for (const c of page) {
            cursor = c.position;
            await print(c);
            if (printed >= limit) break;
          }
          if (printed >= limit) {
            // Only a hint, on stderr: stdout stays the changes alone.
            if (page.at(-1)!.position > last || page.length === 1000) {
              process.stderr.write(`changes: stopped at --limit ${limit}; read on with --after ${last}\n`);
            }
            break;
          }
          if (page.length < 1000 || abort.signal.aborted) break;
        }
        if (abort.signal.aborted) throw abort.signal.reason;
      } catch (error) {
        if (error instanceof ChangesExpiredError)
          throw new CliError(`changes: ${error.message}`, EXIT.problem);
        throw error;
      } finally {
        abort.dispose();
        await runtime.close();
      }
    });
}
