// Every operator command's bad flags: one clear line naming the flag and the fix, and a non-zero exit.
import { describe, expect, it } from "vitest";
import { runCli } from "../support/operator-run.ts";

// No database is reached: commander rejects the flags before any command runs.
const env = { DATABASE_URL: "postgres://postgres@127.0.0.1:1/never" };

// Concurrent: each case is a separate process, mostly spent loading modules.
describe.concurrent("operator commands reject bad flags", () => {
  it.each([
    [
      ["catchup", "--merchant", "acme"],
      /option '--merchant <id>' argument 'acme' is invalid\. expected a merchant ID like mer_abc123/,
    ],
    [["backfill"], /required option '--merchant <id>' not specified/],
    [
      ["backfill", "--merchant", "mer_demo_1", "--since", "yesterday"],
      /option '--since <iso>' argument 'yesterday' is invalid\. expected an ISO 8601 date-time like 2026-11-01T00:00:00Z/,
    ],
    [["status", "--jsn"], /unknown option '--jsn'\s*\(Did you mean --json\?\)/],
    [["replay"], /replay: give an EVENT_ID, or --failed to replay failed events in bulk/],
    [
      ["replay", "ord_123"],
      /value 'ord_123' is invalid for argument 'event-id'\. expected an event ID like evt_abc123/,
    ],
    [
      ["redeliver", "evt_1", "--merchant", "x"],
      /option '--merchant <id>' argument 'x' is invalid\. expected a merchant ID/,
    ],
    [["verify", "--fix"], /unknown option '--fix'/],
    [
      ["doctor", "--merchant", "acme"],
      /option '--merchant <id>' argument 'acme' is invalid\. expected a merchant ID/,
    ],
    [["replay", "evt_1", "--failed"], /replay: give an EVENT_ID or --failed, not both/],
    [["replay", "evt_1", "--merchant", "mer_1"], /replay: --merchant only works with --failed/],
    [["replay", "--failed", "--type", "Order"], /option '--type <type>' argument 'Order' is invalid/],
    [["replay", "--failed", "--since", "monday"], /option '--since <iso>' argument 'monday' is invalid/],
  ])("loops-sync %j", async (args, message) => {
    const r = await runCli(args, env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it.each(["catchup", "backfill", "status", "replay", "redeliver", "verify", "doctor"])(
    "loops-sync %s --help exits 0",
    async (command) => {
      const r = await runCli([command, "--help"], env);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`Usage: loops-sync ${command}`));
    },
  );
});
