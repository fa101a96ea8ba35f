// followChanges against a real Postgres: woken by NOTIFY, polling when notifications are lost, resuming after
// its connections are killed or cut, each change once and in order.
import { connect, type Sql } from "@loops-sync/db";
import { type Change, ChangesExpiredError, followChanges } from "@loops-sync/schema";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";
import { writeNewOrders } from "../support/write-changes.ts";

/** Long enough that only a notification (or a reconnect) can wake the follower within a test. */
const NEVER_MS = 600_000;

/** Runs followChanges in the background, collecting what it yields, until stopped. */
function follow(sql: Sql, options: { after: number; pollIntervalMs?: number }) {
  const controller = new AbortController();
  const seen: Change[] = [];
  const done = (async () => {
    for await (const change of followChanges(sql, { ...options, signal: controller.signal }))
      seen.push(change);
  })();
  return { seen, done, stop: () => controller.abort() };
}

describe("followChanges", () => {
  let db: TestDatabase;
  const pools: Sql[] = [];
  const pool = (url: string, applicationName: string) => {
    const sql = connect(url, { max: 2, applicationName });
    pools.push(sql);
    return sql;
  };
  const positions = async (after: number) =>
    (
      await db.sql<
        { position: number }[]
      >`select position from replica.changes where position > ${after} order by position`
    ).map((r) => r.position);
  const head = async () =>
    (await db.sql<{ p: number }[]>`select coalesce(max(position), 0)::int as p from replica.changes`)[0]!.p;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.end({ timeout: 5 })));
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("yields what is there, then each new commit as NOTIFY wakes it, once and in order", async () => {
    const after = await head();
    await writeNewOrders(db.sql, "n0", 3);
    const follower = follow(pool(db.url, "feed-notify"), { after, pollIntervalMs: NEVER_MS });
    await waitFor(() => follower.seen.length === 3, { what: "the changes already there" });
    await writeNewOrders(db.sql, "n1", 4);
    await waitFor(() => follower.seen.length >= 7, { what: "a NOTIFY-woken read" });
    follower.stop();
    await follower.done;
    expect(follower.seen.map((c) => c.position)).toEqual(await positions(after));
    expect(follower.seen.map((c) => c.resource_id)).toEqual([
      ...["ord_n0_0", "ord_n0_1", "ord_n0_2"],
      ...["ord_n1_0", "ord_n1_1", "ord_n1_2", "ord_n1_3"],
    ]);
  });

  it("still delivers by polling when notifications are lost", async () => {
    const after = await head();
    const follower = follow(pool(db.url, "feed-poll"), { after, pollIntervalMs: 100 });
    // The writers' NOTIFY trigger is off: no notification is ever sent for these commits.
    await db.sql`alter table replica.changes disable trigger changes_notify`;
    try {
      await writeNewOrders(db.sql, "p", 5);
      await waitFor(() => follower.seen.length >= 5, { what: "a polled read" });
    } finally {
      await db.sql`alter table replica.changes enable trigger changes_notify`;
    }
    follower.stop();
    await follower.done;
    expect(follower.seen.map((c) => c.position)).toEqual(await positions(after));
  });

  it("resumes after its connections are terminated, with no loss and no duplicate", async () => {
    const after = await head();
    const follower = follow(pool(db.url, "feed-killed"), { after, pollIntervalMs: NEVER_MS });
    await writeNewOrders(db.sql, "k0", 3);
    await waitFor(() => follower.seen.length === 3, { what: "the first changes" });
    for (let round = 1; round <= 3; round++) {
      const killed = await db.sql`
        select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'feed-killed'`;
      expect(killed.length).toBeGreaterThan(0);
      await writeNewOrders(db.sql, `k${round}`, 3);
      await waitFor(() => follower.seen.length >= 3 + 3 * round, { what: `the changes after kill ${round}` });
    }
    follower.stop();
    await follower.done;
    expect(follower.seen.map((c) => c.position)).toEqual(await positions(after));
  });

  it("reads what committed while its connection was cut, once the listener is back", async () => {
    const u = new URL(db.url);
    const proxy = await startTcpProxy({ host: u.hostname, port: Number(u.port || 5432) });
    try {
      u.port = String(proxy.port);
      const after = await head();
      const follower = follow(pool(u.toString(), "feed-cut"), { after, pollIntervalMs: NEVER_MS });
      await writeNewOrders(db.sql, "c0", 2);
      await waitFor(() => follower.seen.length === 2, { what: "the first changes" });
      await proxy.cut();
      // Committed while nobody listens: their notifications are gone for good.
      await writeNewOrders(db.sql, "c1", 4);
      await proxy.restore();
      await waitFor(() => follower.seen.length >= 6, {
        timeoutMs: 30_000,
        what: "the re-read after re-LISTEN",
      });
      follower.stop();
      await follower.done;
      expect(follower.seen.map((c) => c.position)).toEqual(await positions(after));
    } finally {
      await proxy.close();
    }
  });

  it("ends cleanly when its signal is aborted while it waits", async () => {
    const follower = follow(pool(db.url, "feed-abort"), { after: await head(), pollIntervalMs: NEVER_MS });
    await waitFor(
      async () => {
        const [row] =
          await db.sql`select 1 from pg_stat_activity where application_name = 'feed-abort' and query ilike 'listen%'`;
        return row;
      },
      { what: "the follower to LISTEN" },
    );
    follower.stop();
    await expect(follower.done).resolves.toBeUndefined();
    expect(follower.seen).toEqual([]);
  });

  it("throws ChangesExpiredError for a cursor older than what prune removed", async () => {
    await writeNewOrders(db.sql, "e", 2);
    await db.sql`update replica.change_feed_state set pruned_through = ${await head()}`;
    try {
      const follower = follow(pool(db.url, "feed-expired"), { after: 0, pollIntervalMs: NEVER_MS });
      await expect(follower.done).rejects.toBeInstanceOf(ChangesExpiredError);
    } finally {
      await db.sql`update replica.change_feed_state set pruned_through = 0`;
    }
  });
});
