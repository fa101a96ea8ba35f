// `loops-sync changes` as an operator or a script runs it: a real process against real Postgres, reading
// the rows replica.read_changes returns, written by the writers' own recordChanges.
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { bin, runCli } from "../support/operator-run.ts";
import { orderChange, writeChanges, writeNewOrders } from "../support/write-changes.ts";

const lines = (out: string) => out.split("\n").filter(Boolean);

describe("loops-sync changes", () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url };
    await writeChanges(db.sql, [
      orderChange("ord_c1", 1, "placed", null),
      orderChange("ord_c2", 1, "placed", null, "mer_other"),
    ]);
    await writeChanges(db.sql, [orderChange("ord_c1", 2, "accepted", "placed")]);
    await writeChanges(db.sql, [
      {
        resource: "location",
        resourceId: "loc_1",
        merchantId: "mer_feed_1",
        operation: "insert",
        source: "backfill",
      },
    ]);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("--json prints one object per line: the rows of replica.read_changes", async () => {
    const r = await runCli(["changes", "--json"], env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const rows = await db.sql`select * from replica.read_changes(0, 1000)`;
    expect(lines(r.stdout).map((l) => JSON.parse(l))).toEqual(JSON.parse(JSON.stringify(rows)));
  });

  it("prints a readable line per change, with the status transition", async () => {
    const r = await runCli(["changes"], env);
    expect(r.code).toBe(0);
    const out = lines(r.stdout);
    expect(out).toHaveLength(4);
    expect(out[2]).toMatch(
      /^#\d+ \S+Z order ord_c1 mer_feed_1 update v1→v2 placed→accepted \(webhook evt_ord_c1_2\)$/,
    );
    expect(out[3]).toMatch(/^#\d+ \S+Z location loc_1 mer_feed_1 insert \(backfill\)$/);
  });

  it("filters by merchant and resource, and pages with --after and --limit", async () => {
    const all = lines((await runCli(["changes", "--json"], env)).stdout).map((l) => JSON.parse(l));
    const mine = await runCli(["changes", "--json", "--merchant", "mer_feed_1", "--resource", "order"], env);
    expect(lines(mine.stdout).map((l) => JSON.parse(l).resource_id)).toEqual(["ord_c1", "ord_c1"]);
    const first = await runCli(["changes", "--json", "--limit", "2"], env);
    expect(lines(first.stdout).map((l) => JSON.parse(l))).toEqual(all.slice(0, 2));
    expect(first.stderr).toBe(`changes: stopped at --limit 2; read on with --after ${all[1].position}\n`);
    const rest = await runCli(["changes", "--json", "--after", String(all[1].position)], env);
    expect(lines(rest.stdout).map((l) => JSON.parse(l))).toEqual(all.slice(2));
  });

  it.each([
    [
      ["--after", "-1"],
      /option '--after <position>' argument '-1' is invalid\. expected a whole number of 0 or more/,
    ],
    [["--limit", "0"], /option '--limit <n>' argument '0' is invalid\. expected a whole number of 1 or more/],
    [
      ["--merchant", "acme"],
      /option '--merchant <id>' argument 'acme' is invalid\. expected a merchant ID like mer_/,
    ],
    [
      ["--resource", "orders"],
      /option '--resource <resource>' argument 'orders' is invalid\. Allowed choices are order,/,
    ],
  ])("refuses %j naming the flag (exit 2)", async (args, message) => {
    const r = await runCli(["changes", ...args], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe("");
  });

  it("fails with one changes_expired line and exit 1 for a cursor older than what prune removed", async () => {
    await db.sql`update replica.change_feed_state set pruned_through = 2`;
    try {
      const r = await runCli(["changes", "--after", "1"], env);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(
        /^loops-sync: changes: changes_expired: changes up to position 2 were pruned .*read on after position 2\n$/,
      );
    } finally {
      await db.sql`update replica.change_feed_state set pruned_through = 0`;
    }
  });

  it("--follow --limit N stops after N changes, exit 0", async () => {
    const all = lines((await runCli(["changes", "--json"], env)).stdout);
    const r = await runCli(["changes", "--follow", "--limit", "2", "--json"], env);
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r.stdout)).toEqual(all.slice(0, 2));
  });

  it("--follow prints new commits as they come and exits 130 on Ctrl-C, naming where to resume", async () => {
    const [row] = await db.sql<{ head: number }[]>`select max(position)::int as head from replica.changes`;
    const head = row!.head;
    const child = spawn(bin, ["changes", "--follow", "--json", "--after", String(head)], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", LOG_LEVEL: "silent", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
    try {
      await waitFor(
        async () => {
          const [row] =
            await db.sql`select 1 from pg_stat_activity where application_name = 'loops-sync changes' and query ilike 'listen%'`;
          return row;
        },
        { what: "the follower to LISTEN" },
      );
      await writeNewOrders(db.sql, "f", 3);
      await waitFor(() => lines(stdout).length === 3, { what: `three lines (stderr: ${stderr})` });
      child.kill("SIGINT");
      expect(await exited).toBe(130);
      const printed = lines(stdout).map((l) => JSON.parse(l));
      expect(printed.map((c) => c.resource_id)).toEqual(["ord_f_0", "ord_f_1", "ord_f_2"]);
      expect(stderr).toBe(`loops-sync: interrupted; resume with --after ${printed[2].position}\n`);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
