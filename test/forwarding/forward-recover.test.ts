// `loops-sync forward recover` and `forward retry --dead` as the operator runs them (real processes), against
// a real forwarder and a real HTTP endpoint verifying every signature: a window of kept changes is sent again
// in order per resource, a window older than prune kept is refused with the oldest time kept, bad flags exit
// 2 naming the flag, and a dead change superseded by a newer delivered one is dropped, not sent after it.

import { createLogger } from "@loops-sync/config";
import { type Forwarder, startForwarder } from "@loops-sync/worker";
import { afterEach, describe, expect, it } from "vitest";
import { type ForwardEndpoint, startForwardEndpoint } from "#testkit/forward-endpoint";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { expectEveryChangeDelivered, writeChanges } from "../support/forward-changes.ts";
import { runCli } from "../support/operator-run.ts";

const SECRET = `whsec_${Buffer.from("forward-recover-test-secret-32by").toString("base64")}`;
const logger = createLogger({ name: "forward-test", level: process.env.TEST_LOG ? "debug" : "silent" });

describe("forward recover and retry --dead", () => {
  let db: TestDatabase | undefined;
  let endpoint: ForwardEndpoint | undefined;
  let forwarder: Forwarder | undefined;
  afterEach(async () => {
    await forwarder?.stop(1000);
    await endpoint?.close();
    await db?.drop();
  });

  const start = async (options: { maxAgeHours?: number; failing?: Set<number> } = {}) => {
    db = await createTestDatabase();
    const failing = options.failing;
    endpoint = await startForwardEndpoint({
      secret: SECRET,
      answer: ({ position }) => (failing?.has(position) ? { status: 500 } : undefined),
    });
    forwarder = await startForwarder({
      sql: db.sql,
      url: endpoint.url,
      secret: SECRET,
      retryBaseMs: 100,
      retryCapMs: 300,
      pollIntervalMs: 200,
      maxInFlight: 8,
      ...(options.maxAgeHours ? { maxAgeHours: options.maxAgeHours } : {}),
      logger,
    });
    return { db, endpoint };
  };

  /** A moment between two commits, in whole milliseconds (what an ISO flag can say), and past it. */
  const between = async (sql: TestDatabase["sql"]): Promise<string> => {
    const [row] = await sql<{ at: Date }[]>`
      select date_trunc('milliseconds', clock_timestamp()) + interval '1 millisecond' as at, pg_sleep(0.005)`;
    return row!.at.toISOString();
  };

  const accepted = (e: ForwardEndpoint, n: number, what: string) =>
    waitFor(() => e.accepted().length >= n, { timeoutMs: 60_000, what });

  it("sends a window of kept changes again, in order per resource", { timeout: 300_000 }, async () => {
    const { db, endpoint } = await start();
    const before = await writeChanges(db.sql, { resources: 3, perResource: 2 });
    await accepted(endpoint, before.length, "the first changes");
    const since = await between(db.sql);
    const first = await writeChanges(db.sql, { resources: 3, perResource: 1 });
    const until = await between(db.sql);
    const window = [...first, ...(await writeChanges(db.sql, { resources: 3, perResource: 2 }))];
    await accepted(endpoint, before.length + window.length, "every change once");
    expectEveryChangeDelivered(endpoint, [...before, ...window]);
    const sent = endpoint.requests.length;

    const env = { DATABASE_URL: db.url };
    const recovered = await runCli(["forward", "recover", "--since", since, "--json"], env);
    expect(recovered.code, recovered.stderr).toBe(0);
    expect(JSON.parse(recovered.stdout)).toEqual({
      recovered: window.length,
      positions: window,
      since,
      until: null,
      resources: [],
    });
    await accepted(endpoint, before.length + 2 * window.length, "the window again");
    const again = endpoint.requests.slice(sent);
    expect(again.map((r) => r.position).sort((a, b) => a - b)).toEqual(window);
    const last = new Map<string, number>();
    for (const r of again) {
      expect(r.signatureValid).toBe(true);
      expect(r.position, `${r.resourceId} out of order`).toBeGreaterThan(last.get(r.resourceId) ?? 0);
      last.set(r.resourceId, r.position);
    }

    // Only one resource, and an --until: the window's first commit.
    const human = await runCli(
      ["forward", "recover", "--since", since, "--until", until, "--resource", "menu"],
      env,
    );
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toBe(
      "forward recover: no kept change was committed in that window; nothing to send again\n",
    );
    const one = await runCli(["forward", "recover", "--since", since, "--until", until, "--json"], env);
    expect(JSON.parse(one.stdout).positions).toEqual(first);
  });

  it("refuses bad flags with exit 2 naming the flag, and a window older than prune kept", {
    timeout: 300_000,
  }, async () => {
    const { db } = await start();
    const env = { DATABASE_URL: db.url };
    const run = (...args: string[]) => runCli(["forward", "recover", ...args], env, 120_000);
    // Independent runs, at once (each is a process start on a busy machine).
    const [missing, bad, pizza, backwards, future] = await Promise.all([
      run(),
      run("--since", "yesterday"),
      run("--since", "2026-01-01T00:00:00Z", "--resource", "pizza"),
      run("--since", "2026-01-02T00:00:00Z", "--until", "2026-01-01T00:00:00Z"),
      run("--since", new Date(Date.now() + 86_400_000).toISOString()),
    ]);
    expect([missing.code, missing.stderr]).toEqual([2, expect.stringContaining("--since")]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(
      /--since <iso>.*expected an ISO 8601 date-time like 2026-11-01T00:00:00Z, got "yesterday"/,
    );
    expect(pizza.code).toBe(2);
    expect(pizza.stderr).toMatch(/--resource <resource>.*pizza.*order/);
    expect(backwards.code).toBe(2);
    expect(backwards.stderr).toContain("--until 2026-01-01T00:00:00.000Z is not after --since");
    expect(future.code).toBe(2);
    expect(future.stderr).toContain("is in the future");

    // Old changes, delivered, then pruned by the real command: the window cannot be sent whole.
    const old = await writeChanges(db.sql, { resources: 2, perResource: 2 });
    await accepted(endpoint!, old.length, "the old changes");
    await waitFor(async () => (await db.sql`select 1 from sync.forward_deliveries`).length === 0, {
      what: "the old changes settled",
    });
    // Backdated past RETENTION_DAYS (35); the feed refuses updates, so its triggers are off for this one.
    await db.sql.begin(async (tx) => {
      await tx`set local session_replication_role = replica`;
      await tx`update replica.changes set changed_at = now() - interval '40 days'`;
    });
    const kept = await writeChanges(db.sql, { resources: 2, perResource: 1 });
    const pruned = await runCli(["prune"], env, 120_000);
    expect(pruned.code, pruned.stderr).toBe(0);
    const [oldest] = await db.sql<{ changed_at: Date }[]>`
      select changed_at from replica.changes where position = ${kept[0]!}`;
    const since = new Date(Date.now() - 50 * 86_400_000).toISOString();
    const refused = await run("--since", since);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `--since ${since} is older than what prune kept (RETENTION_DAYS): the oldest change kept was committed at ${oldest!.changed_at.toISOString()}; give --since ${oldest!.changed_at.toISOString()} or later`,
    );
    const fine = await run("--since", oldest!.changed_at.toISOString(), "--json");
    expect(fine.code, fine.stderr).toBe(0);
    expect(JSON.parse(fine.stdout).positions).toEqual(kept);
  });

  it("retry --dead drops a dead change whose newer change was delivered, and revives the rest in order", {
    timeout: 120_000,
  }, async () => {
    const failing = new Set<number>();
    // Dead one second after the commit.
    const { db, endpoint } = await start({ maxAgeHours: 1 / 3600, failing });
    // Positions in commit order: chn_0 v1, chn_1 v1, chn_0 v2, chn_1 v2 (written in one transaction).
    const [max] = await db.sql<
      { max: number }[]
    >`select coalesce(max(position), 0)::int8 as max from replica.changes`;
    for (const i of [1, 2, 4]) failing.add(max!.max + i);
    const positions = await writeChanges(db.sql, { resources: 2, perResource: 2 });
    expect(positions.map((p) => p - max!.max)).toEqual([1, 2, 3, 4]);
    const [chn0v1, chn1v1, chn0v2, chn1v2] = positions as [number, number, number, number];
    await waitFor(
      async () => {
        const rows = await db.sql<{ position: number }[]>`
          select position from sync.forward_deliveries where dead_at is not null order by 1`;
        return rows.length === 3 && endpoint.accepted().length === 1;
      },
      { timeoutMs: 60_000, what: "three dead, chn_0's newer change delivered" },
    );
    expect(endpoint.accepted().map((r) => r.position)).toEqual([chn0v2]);

    failing.clear();
    const retried = await runCli(["forward", "retry", "--dead", "--json"], { DATABASE_URL: db.url });
    expect(retried.code, retried.stderr).toBe(0);
    expect(JSON.parse(retried.stdout)).toEqual({
      retried: 2,
      positions: [chn1v1, chn1v2],
      dead: true,
      superseded: [chn0v1],
    });
    await accepted(endpoint, 3, "chn_1's two changes");
    await waitFor(async () => (await db.sql`select 1 from sync.forward_deliveries`).length === 0, {
      what: "the queue empty",
    });
    // chn_0 v1 never reached the endpoint after v2; chn_1's came in order.
    expect(endpoint.accepted().map((r) => r.position)).toEqual([chn0v2, chn1v1, chn1v2]);
  });
});
