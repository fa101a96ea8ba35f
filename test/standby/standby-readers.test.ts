// Readers on a streaming standby (DESIGN.md), proven on a real hot standby (testkit/standby-cluster.ts) while
// `loops-sync start` writes to its primary: live orders from the sandbox over HTTP, as signed webhooks.
import { type ChildProcess, spawn } from "node:child_process";
import { connect, migrate, type Sql } from "@loops-sync/db";
import type { Sandbox } from "@loops-sync/sandbox";
import { startSandbox } from "@loops-sync/sandbox";
import { type Change, followChanges, readChanges } from "@loops-sync/schema";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StandbyCluster, startStandbyCluster } from "#testkit/standby-cluster";
import { waitFor } from "#testkit/wait-for";
import { type StartedLoopsSync, startLoopsSync } from "../support/loops-sync-start.ts";
import { bin, runCli } from "../support/operator-run.ts";
import { replicaOrders, truthOrders } from "../support/sandbox-orders.ts";

const MERCHANTS = ["mer_demo_1", "mer_demo_2"];
const READ_ALL =
  "select position::text as p, resource, resource_id, version::text as v from replica.read_changes($1, 10000, $2, $3)";
type Row = { p: string; resource: string; resource_id: string; v: string | null };
const readAll = (sql: Sql, resources: string[] | null = null, merchants: string[] | null = null) =>
  sql.unsafe(READ_ALL, [0, resources as never, merchants as never]) as Promise<Row[]>;

/** Orders made and moved along in the sandbox for `ms`, a few a second, until stopped. */
async function liveOrders(sandbox: Sandbox, ms: number): Promise<number> {
  const ids: string[] = [];
  const end = Date.now() + ms;
  for (let i = 0; Date.now() < end; i++) {
    ids.push(sandbox.createOrder({ merchantId: MERCHANTS[i % 2]! }).id);
    for (const id of ids.slice(-3)) {
      try {
        sandbox.advanceOrder(id);
      } catch {
        // reached a final status
      }
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  return ids.length;
}

describe("readers on a standby, while the primary takes live orders", { timeout: 240_000 }, () => {
  let cluster: StandbyCluster;
  let sandbox: Sandbox;
  let started: StartedLoopsSync | undefined;
  let primary: Sql;
  let standby: Sql;
  let follower: postgres.Sql;
  let followerQueries = 0;
  const followed: Change[] = [];
  const stopFollowing = new AbortController();
  let following: Promise<void>;
  let cliFollow: ChildProcess;
  let cliOut = "";
  const samples: { standby: number; primary: number }[] = [];

  beforeAll(async () => {
    [cluster, sandbox] = await Promise.all([
      startStandbyCluster({
        prepare: async (url) => {
          const sql = connect(url, { max: 2 });
          await migrate(sql, url).finally(() => sql.end());
        },
      }),
      startSandbox({ port: 0 }),
    ]);
    primary = connect(cluster.primary.url("loops"), { max: 2, applicationName: "standby-test-primary" });
    standby = connect(cluster.standby.url("loops"), { max: 2, applicationName: "standby-test-standby" });
    // Counts every query the follower sends: its state polls and its reads.
    follower = postgres(cluster.standby.url("loops"), { max: 2, debug: () => void followerQueries++ });
    // The 5 s fallback read is set to a minute: what the follower sees in time, the replay watch brought.
    following = (async () => {
      for await (const c of followChanges(follower, {
        after: 0,
        signal: stopFollowing.signal,
        pollIntervalMs: 60_000,
      }))
        followed.push(c);
    })();
    cliFollow = spawn(bin, ["changes", "--follow", "--json"], {
      env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "silent", DATABASE_URL: cluster.standby.url("loops") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    cliFollow.stdout!.on("data", (d) => (cliOut += d));
    cliFollow.stderr!.on("data", (d) => (cliOut += d));
    started = await startLoopsSync({ databaseUrl: cluster.primary.url("loops"), sandbox });

    // Live orders for a while; meanwhile the feed is read on the standby, then on the primary, again and again.
    let loading = true;
    const sampling = (async () => {
      while (loading) {
        const [s, sf] = await Promise.all([readAll(standby), readAll(standby, ["order"], ["mer_demo_2"])]);
        // A commit can be replayed on the standby a moment before the primary's own readers see it (the WAL is
        // sent once flushed, before the committing backend leaves the proc array): read the primary again
        // until it holds at least as much, within a second.
        let p: Row[] = [];
        let pf: Row[] = [];
        for (let tries = 0; tries < 50; tries++) {
          [p, pf] = await Promise.all([readAll(primary), readAll(primary, ["order"], ["mer_demo_2"])]);
          if (p.length >= s.length && pf.length >= sf.length) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        // Gap-free and in order at this moment: what the standby has is exactly the start of what the primary
        // has a moment later (nothing is pruned here).
        expect(s).toEqual(p.slice(0, s.length));
        expect(sf).toEqual(pf.slice(0, sf.length));
        samples.push({ standby: s.length, primary: p.length });
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    // Its failure is awaited below; meanwhile it must not count as unhandled.
    sampling.catch(() => {});
    // Sampled until the primary has mirrored every order: on a loaded machine most of it commits after the
    // orders were made.
    await liveOrders(sandbox, 8000);
    await waitFor(
      async () =>
        (await Promise.all(MERCHANTS.map((m) => replicaOrders(primary, m)))).every(
          (rows, i) => JSON.stringify(rows) === JSON.stringify(truthOrders(sandbox, MERCHANTS[i]!)),
        ),
      { timeoutMs: 90_000, what: "the primary's replica to equal the sandbox's orders" },
    ).finally(() => {
      loading = false;
    });
    await sampling;
  }, 240_000);

  afterAll(async () => {
    stopFollowing.abort();
    await following?.catch(() => {});
    if (cliFollow && cliFollow.exitCode === null) cliFollow.kill("SIGKILL");
    if (started && started.child.exitCode === null) started.child.kill("SIGKILL");
    await Promise.all([primary?.end(), standby?.end(), follower?.end()]);
    await sandbox?.close();
    await cluster?.stop();
  });

  it("read_changes on the standby was always a gap-free prefix of the primary's, filters included", async () => {
    expect(samples.length).toBeGreaterThan(5);
    expect(samples.at(-1)!.primary).toBeGreaterThan(20);
    const [p, s] = await waitFor(async () => {
      const [p, s] = await Promise.all([readAll(primary), readAll(standby)]);
      return p.length === s.length && [p, s];
    });
    expect(s).toEqual(p);
    const positions = s.map((r) => Number(r.p));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });

  it("readChanges and followChanges of @loops-sync/schema return the primary's changes on the standby", async () => {
    const onPrimary = await readChanges(primary, { after: 0, limit: 10_000 });
    expect(await readChanges(standby, { after: 0, limit: 10_000 })).toEqual(onPrimary);
    const filtered = { after: 0, limit: 10_000, resources: ["order" as const], merchantIds: ["mer_demo_1"] };
    expect(await readChanges(standby, filtered)).toEqual(await readChanges(primary, filtered));
    // Well within the minute of its fallback read: woken by the standby's replay.
    await waitFor(() => followed.length >= onPrimary.length, { timeoutMs: 40_000, what: "the follower" });
    expect(followed).toEqual(onPrimary);
  });

  it("`loops-sync changes --follow` on the standby prints every change the primary has", async () => {
    const onPrimary = await readChanges(primary, { after: 0, limit: 10_000 });
    const printed = () =>
      cliOut
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l).position);
    await waitFor(() => printed().length >= onPrimary.length, {
      timeoutMs: 60_000,
      what: `changes --follow to print ${onPrimary.length} changes (output: ${cliOut.slice(-500)})`,
    });
    expect(printed()).toEqual(onPrimary.map((c) => c.position));
    expect(cliFollow.exitCode).toBeNull();
  });

  it("every reporting view answers on the standby, as on the primary", async () => {
    const views = await primary<{ name: string }[]>`
      select format('%I.%I', n.nspname, c.relname) as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'reporting' and c.relkind in ('v', 'm') order by 1`;
    expect(views.length).toBeGreaterThan(3);
    for (const { name } of views) {
      const [p] = await primary.unsafe(`select count(*)::int as n from ${name}`);
      const [s] = await standby.unsafe(`select count(*)::int as n from ${name}`);
      expect({ name, n: s!.n }).toEqual({ name, n: p!.n });
    }
  });

  it("a role granted reader on the primary reads the mirror on the standby, and nothing of sync", async () => {
    await primary.unsafe("create role standby_analyst login");
    const granted = await runCli(
      ["grant", "reader", "standby_analyst"],
      { DATABASE_URL: cluster.primary.url("loops") },
      240_000,
    );
    expect([granted.code, granted.stderr]).toEqual([0, ""]);
    const [{ lsn }] = await primary<[{ lsn: string }]>`select pg_current_wal_lsn()::text as lsn`;
    await waitFor(
      async () => (await standby`select pg_last_wal_replay_lsn() >= ${lsn}::pg_lsn as ok`)[0]!.ok,
    );
    const url = new URL(cluster.standby.url("loops"));
    url.username = "standby_analyst";
    const analyst = connect(url.toString(), { max: 1, applicationName: "standby-analyst" });
    try {
      const [{ n }] = await analyst<[{ n: number }]>`select count(*)::int as n from replica.orders`;
      expect(n).toBeGreaterThan(0);
      expect((await analyst`select * from replica.read_changes(0, 5)`).length).toBe(5);
      expect((await analyst`select * from reporting.orders`).length).toBe(n);
      // sync_health reads sync with its owner's rights: it answers the reader there too.
      expect((await analyst`select * from reporting.sync_health`).length).toBeGreaterThan(0);
      await expect(analyst`select count(*) from sync.events`).rejects.toMatchObject({ code: "42501" });
    } finally {
      await analyst.end();
    }
  });

  it("an idle standby costs a follower about one state poll a second", async () => {
    started!.child.kill("SIGTERM");
    await new Promise((r) => started!.child.once("exit", r));
    cliFollow.kill("SIGINT");
    // The primary idle: the follower's polls have slowed to their idle pace after a second or two.
    await new Promise((r) => setTimeout(r, 3000));
    const before = followerQueries;
    await new Promise((r) => setTimeout(r, 6000));
    const perMinute = ((followerQueries - before) / 6) * 60;
    // One poll a second is 60 a minute, the fallback read every 5 s 12 more; a commit on the primary (autovacuum's
    // analyze) adds a read and a few fast polls. Polling at the fastest pace (100 ms) would be 600.
    expect(perMinute).toBeLessThanOrEqual(150);
    expect(perMinute).toBeGreaterThan(0);
  });
});
