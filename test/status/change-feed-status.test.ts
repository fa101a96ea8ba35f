// The change feed as `status` reads it: head, oldest retained, pruned_through and size, from the primary
// key and the catalog; rows counted exactly while the feed is small, the planner's estimate beyond.
import { registerProcessMetrics } from "@loops-sync/cli/process-metrics";
import { pruneFinished } from "@loops-sync/db";
import { needsAttention, readChangeFeed, readSyncStatus } from "@loops-sync/status";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { parseExposition } from "../support/scrape.ts";

async function addChanges(db: TestDatabase, n: number, age: string): Promise<void> {
  await db.sql`
    insert into replica.changes (resource, resource_id, merchant_id, operation, source, changed_at)
    select 'order', 'ord_' || i, 'mer_1', 'update', 'webhook', now() - ${age}::interval
    from generate_series(1, ${n}) as i`;
}

describe("the change feed in status", () => {
  let db: TestDatabase;
  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await db?.drop();
  });

  it("shows an empty feed as empty", async () => {
    expect(await readChangeFeed(db.sql)).toMatchObject({
      headPosition: null,
      headChangedAt: null,
      oldestPosition: null,
      prunedThrough: 0,
      rows: 0,
      rowsExact: true,
    });
  });

  it("shows the head, the oldest retained position and pruned_through after a prune", async () => {
    await addChanges(db, 40, "40 days");
    await addChanges(db, 25, "1 minute");
    await pruneFinished({ sql: db.sql, before: new Date(Date.now() - 35 * 86_400_000), restRatio: 0 });
    const [head] = await db.sql<
      { at: Date }[]
    >`select changed_at as at from replica.changes where position = 65`;
    const status = await readSyncStatus(db.sql);
    expect(status.changeFeed).toEqual({
      headPosition: 65,
      headChangedAt: head!.at.toISOString(),
      oldestPosition: 41,
      prunedThrough: 40,
      rows: 25,
      rowsExact: true,
      totalBytes: expect.any(Number),
    });
    const [size] = await db.sql<{ bytes: number }[]>`
      select pg_total_relation_size('replica.changes')::float8 as bytes`;
    expect(status.changeFeed.totalBytes).toBe(size!.bytes);
    expect(status.changeFeed.totalBytes).toBeGreaterThan(0);
  });

  it("estimates the rows of a feed that spans many positions instead of counting them", async () => {
    await addChanges(db, 60_000, "1 minute");
    await db.sql`delete from replica.changes where position % 2 = 0`;
    await db.sql`vacuum analyze replica.changes`;
    const [estimate] = await db.sql<{ n: number }[]>`
      select reltuples::float8 as n from pg_class where oid = 'replica.changes'::regclass`;
    const feed = await readChangeFeed(db.sql);
    expect(feed).toMatchObject({ headPosition: 59_999, oldestPosition: 1, rowsExact: false });
    expect(feed.rows).toBe(Math.round(estimate!.n));
    expect(feed.rows).toBeGreaterThan(25_000);
    expect(feed.rows).toBeLessThan(35_000);
  });

  it("shows each feed consumer's lag in changes and seconds, and needs attention after 10 minutes", async () => {
    await addChanges(db, 3, "20 minutes");
    await addChanges(db, 2, "1 minute");
    await db.sql`select replica.create_consumer('fresh')`;
    await db.sql`select replica.create_consumer('late', null, array['mer_1'], 0)`;
    const got = await db.sql`select position from replica.receive_changes('late', 1)`;
    await db.sql`select replica.ack_changes('late', ${got.map((r) => r.position)}::bigint[])`;
    await db.sql`select position from replica.receive_changes('late', 1)`;
    const status = await readSyncStatus(db.sql);
    expect(status.consumers.map((c) => [c.name, c.ackedThrough, c.lagChanges, c.leased])).toEqual([
      ["fresh", 5, 0, 0],
      ["late", 1, 4, 1],
    ]);
    expect(status.consumers[0]!.lagSeconds).toBe(0);
    expect(status.consumers[1]!.lagSeconds).toBeGreaterThan(19 * 60);
    expect(status.consumers[1]!.lagSeconds).toBeLessThan(21 * 60);
    const samples = parseExposition(
      await registerProcessMetrics({ sql: db.sql, merchantLabelsMax: 100 }).metrics(),
    );
    const sample = (name: string, consumer: string) =>
      samples.find((s) => s.name === name && s.labels.consumer === consumer)?.value;
    expect([
      sample("loops_sync_consumer_lag_changes", "late"),
      sample("loops_sync_consumer_leased_changes", "late"),
    ]).toEqual([4, 1]);
    expect(sample("loops_sync_consumer_lag_seconds", "late")).toBeGreaterThan(19 * 60);
    expect(sample("loops_sync_consumer_lag_seconds", "fresh")).toBe(0);
    const attention = needsAttention(status, 3600).filter((a) => a.kind === "consumer_lag");
    expect(attention.map((a) => a.detail)).toEqual([
      expect.stringMatching(/^feed consumer late has 4 unacknowledged/),
    ]);
  });
});
