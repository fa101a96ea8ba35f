// What cannot run on a streaming standby says so, in one line naming the primary, on a real hot standby of a
// primary of its own (testkit/standby-cluster.ts): the feed consumer functions, consumeChanges and every verb
// that writes. And what reads there, status and doctor, says it is a standby and how far behind it is.
import { connect, migrate, type Sql } from "@loops-sync/db";
import { DEFAULT_WEBHOOK_SECRET, type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { consumeChanges } from "@loops-sync/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loopsApiEnv } from "#testkit/processes";
import { type StandbyCluster, startStandbyCluster } from "#testkit/standby-cluster";
import { runCli } from "../support/operator-run.ts";

// Real processes on a machine other tests load too: seconds each, more when it is busy.
const CLI_TIMEOUT_MS = 240_000;

/** Runs `loops-sync` once per argument list, four at a time (each is a Node process starting). */
async function runEach(argLists: string[][], env: Record<string, string>) {
  const results: Awaited<ReturnType<typeof runCli>>[] = [];
  for (let i = 0; i < argLists.length; i += 4) {
    results.push(
      ...(await Promise.all(argLists.slice(i, i + 4).map((args) => runCli(args, env, CLI_TIMEOUT_MS)))),
    );
  }
  return results;
}
const NAMES_THE_PRIMARY = /run (it )?(against|on) the primary/;

describe("on a standby, what writes refuses naming the primary", { timeout: 600_000 }, () => {
  let cluster: StandbyCluster;
  let sandbox: Sandbox;
  let standby: Sql;
  let env: Record<string, string>;

  beforeAll(async () => {
    [cluster, sandbox] = await Promise.all([
      startStandbyCluster({
        prepare: async (url) => {
          const sql = connect(url, { max: 2 });
          try {
            await migrate(sql, url);
            await sql`select replica.create_consumer('billing')`;
          } finally {
            await sql.end();
          }
        },
      }),
      startSandbox({ port: 0 }),
    ]);
    standby = connect(cluster.standby.url("loops"), { max: 2, applicationName: "standby-refusals" });
    env = {
      DATABASE_URL: cluster.standby.url("loops"),
      ...loopsApiEnv(sandbox),
      LOOPS_WEBHOOK_SECRETS: DEFAULT_WEBHOOK_SECRET,
      PORT: "0",
      ADMIN_PORT: "0",
    };
  }, 240_000);
  afterAll(async () => {
    await standby?.end();
    await sandbox?.close();
    await cluster?.stop();
  });

  it.each([
    ["create_consumer", "select replica.create_consumer('audit')"],
    ["drop_consumer", "select replica.drop_consumer('billing')"],
    ["receive_changes", "select * from replica.receive_changes('billing')"],
    ["ack_changes", "select replica.ack_changes('billing', array[1::bigint])"],
  ])("replica.%s raises 25006 with one line naming the primary", async (name, query) => {
    const error = await standby.unsafe(query).catch((e: unknown) => e as { code: string; message: string });
    expect(error).toMatchObject({
      code: "25006",
      message: `replica.${name} writes, and this database is a read-only standby: run it on the primary`,
    });
  });

  it("consumeChanges rejects at once naming the primary, before any LISTEN", async () => {
    const pool = connect(cluster.standby.url("loops"), { max: 2, applicationName: "standby-consumer" });
    try {
      const handled: number[] = [];
      await expect(
        consumeChanges(pool, { consumer: "billing" }, (c) => void handled.push(c.position)),
      ).rejects.toMatchObject({
        code: "25006",
        message: expect.stringMatching(/^consumeChanges: .*read-only standby: run it on the primary/),
      });
      expect(handled).toEqual([]);
    } finally {
      await pool.end();
    }
  });

  const WRITING_VERBS = [
    ["migrate"],
    ["catchup"],
    ["backfill", "--merchant", "mer_demo_1"],
    ["refresh"],
    ["verify", "--repair"],
    ["prune"],
    ["replay", "--failed"],
    ["redeliver", "evt_abc123"],
    ["consumers", "add", "audit"],
    ["consumers", "remove", "billing"],
    ["consumers", "reset", "billing", "--since", "2026-01-01T00:00:00Z"],
    ["forward", "retry"],
    ["grant", "reader", "postgres"],
    // receiver, worker and start open their runtime in one place (run-serve.ts).
    ["worker"],
    ["start"],
  ];

  it("every writing verb exits 3 with one line naming the primary, never a Postgres error", async () => {
    const results = await runEach(WRITING_VERBS, env);
    const seen = results.map((r, i) => ({
      verb: WRITING_VERBS[i]!.join(" "),
      code: r.code,
      stderr: r.stderr
        .trim()
        .split("\n")
        .filter((l) => !l.startsWith("{")),
    }));
    for (const s of seen) {
      expect(s, JSON.stringify(s)).toMatchObject({ code: 3 });
      expect(s.stderr, s.verb).toHaveLength(1);
      expect(s.stderr[0], s.verb).toMatch(
        /^loops-sync: .* writes, and DATABASE_URL points at a read-only standby/,
      );
      expect(s.stderr[0], s.verb).toMatch(NAMES_THE_PRIMARY);
      expect(s.stderr[0], s.verb).not.toMatch(/read-only transaction|during recovery/);
    }
  });

  it("reading verbs run: changes, consumers list, replay --failed --dry-run", async () => {
    const [changes, consumers, dryRun] = await Promise.all([
      runCli(["changes", "--json"], env, CLI_TIMEOUT_MS),
      runCli(["consumers", "list", "--json"], env, CLI_TIMEOUT_MS),
      runCli(["replay", "--failed", "--dry-run", "--json"], env, CLI_TIMEOUT_MS),
    ]);
    expect([changes, consumers, dryRun].map((r) => [r.code, r.stderr])).toEqual([
      [0, ""],
      [0, ""],
      [0, ""],
    ]);
    expect(JSON.parse(consumers.stdout).consumers.map((c: { name: string }) => c.name)).toEqual(["billing"]);
  });

  it("status says it reads a standby and shows its replay lag; --json carries it", async () => {
    const [human, json] = await Promise.all([
      runCli(["status"], env, CLI_TIMEOUT_MS),
      runCli(["status", "--json"], env, CLI_TIMEOUT_MS),
    ]);
    expect(human.stdout.split("\n")[0]).toMatch(
      /^standby \(read-only\): replay \d+(\.\d)? s behind the primary.*streaming; writing verbs and services run against the primary$/,
    );
    const standbyStatus = JSON.parse(json.stdout).standby;
    expect(standbyStatus).toMatchObject({ streaming: true, replayBehindBytes: expect.any(Number) });
    // A fresh, idle standby has replayed all it received: a lag, not a sign or a placeholder.
    expect(standbyStatus.replayLagSeconds).toBeGreaterThanOrEqual(0);
    expect(standbyStatus.replayLagSeconds).toBeLessThan(60);
    // On the primary there is no such line, and `standby` is null.
    const primary = await runCli(
      ["status", "--json"],
      { ...env, DATABASE_URL: cluster.primary.url("loops") },
      CLI_TIMEOUT_MS,
    );
    expect(JSON.parse(primary.stdout).standby).toBeNull();
  });

  it("doctor says it reads a standby, with its lag, and skips what needs the primary", async () => {
    const r = await runCli(["doctor", "--json"], env, CLI_TIMEOUT_MS);
    const report = JSON.parse(r.stdout) as { checks: { check: string; status: string; detail: string }[] };
    const byName = new Map(report.checks.map((c) => [c.check, c]));
    expect(byName.get("standby")).toMatchObject({
      status: "warn",
      detail: expect.stringMatching(/^standby \(read-only\): replay [\d.]+ s behind the primary/),
    });
    expect(byName.get("token")).toMatchObject({
      status: "skipped",
      detail: expect.stringMatching(/primary/),
    });
    expect(byName.get("database")).toMatchObject({ status: "ok" });
    expect(r.code).toBe(0);
  });
});
