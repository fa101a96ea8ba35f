// Prune and the change feed: the oldest changes go in keyset batches, `pruned_through` moves with each batch's
// delete, only a prefix of the feed is removed, and read_changes then refuses a cursor below it
// (changes_expired, SQLSTATE LS410) while a cursor at it reads on without a gap.
import { pruneFinished } from "@loops-sync/db";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { runCli } from "../support/operator-run.ts";

/** Positions 1..old are 40 days old, then `recent` of 1 hour, then `oldAfter` 40 days old again. */
async function seedChanges(db: TestDatabase, old: number, recent: number, oldAfter: number): Promise<void> {
  await db.sql`
    insert into replica.changes (resource, resource_id, merchant_id, operation, version, source, changed_at)
    select 'order', 'ord_' || i, 'mer_1', 'update', i, 'webhook',
           case when i > ${old} and i <= ${old + recent} then now() - interval '1 hour'
                else now() - interval '40 days' + i * interval '1 millisecond' end
    from generate_series(1, ${old + recent + oldAfter}) as i order by i`;
}

async function readChangesError(db: TestDatabase, after: number) {
  return db.sql`select * from replica.read_changes(${after}, 10)`.then(
    () => null,
    (e: { code?: string; message?: string }) => ({ code: e.code, message: e.message }),
  );
}

describe("prune and replica.changes", () => {
  let db: TestDatabase;
  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await db?.drop();
  });

  it("removes the old prefix in batches, moving pruned_through with each delete", async () => {
    await seedChanges(db, 2500, 5, 3);
    const cutoff = new Date(Date.now() - 35 * 86_400_000);
    const dry = await pruneFinished({ sql: db.sql, before: cutoff, dryRun: true, batchSize: 1000 });
    expect({ deleted: dry.changesDeleted, through: dry.changesPrunedThrough }).toEqual({
      deleted: 2500,
      through: 2500,
    });
    const [untouched] = await db.sql`select count(*)::int as n from replica.changes`;
    expect(untouched?.n).toBe(2508);

    // After every batch, what is gone and what pruned_through says are the same thing.
    const seen: { deleted: number; through: number; lowest: number }[] = [];
    const checks: Promise<void>[] = [];
    const result = await pruneFinished({
      sql: db.sql,
      before: cutoff,
      batchSize: 1000,
      restRatio: 0,
      onBatch: ({ changesDeleted }) => {
        checks.push(
          db.sql<{ through: number; lowest: number }[]>`
            select pruned_through as through, (select min(position) from replica.changes) as lowest
            from replica.change_feed_state`.then(([row]) => {
            seen.push({ deleted: changesDeleted, through: row!.through, lowest: row!.lowest });
          }),
        );
      },
    });
    await Promise.all(checks);
    expect(result.changesDeleted).toBe(2500);
    expect(result.changesPrunedThrough).toBe(2500);
    expect(seen.length).toBe(3);
    for (const s of seen) expect(s.lowest).toBe(s.through + 1);
    expect(seen.at(-1)).toEqual({ deleted: 2500, through: 2500, lowest: 2501 });

    // The 3 old changes after the recent ones stay: removing them would hide them below a retained one.
    const left = await db.sql<{ position: number }[]>`select position from replica.changes order by position`;
    expect(left.map((r) => r.position)).toEqual([2501, 2502, 2503, 2504, 2505, 2506, 2507, 2508]);

    expect(await readChangesError(db, 0)).toEqual({
      code: "LS410",
      message: expect.stringContaining("changes_expired"),
    });
    expect(await readChangesError(db, 2499)).toMatchObject({ code: "LS410" });
    const from = await db.sql<{ position: number }[]>`select position from replica.read_changes(2500, 3)`;
    expect(from.map((r) => r.position)).toEqual([2501, 2502, 2503]);

    // A second prune finds nothing old at the head and leaves everything as it was.
    const again = await pruneFinished({ sql: db.sql, before: cutoff, restRatio: 0 });
    expect({ deleted: again.changesDeleted, through: again.changesPrunedThrough }).toEqual({
      deleted: 0,
      through: 2500,
    });
  });

  it("`loops-sync prune --json` reports the changes, with and without --dry-run", async () => {
    await seedChanges(db, 30, 2, 0);
    const env = { DATABASE_URL: db.url, RETENTION_DAYS: "35" };
    const dry = await runCli(["prune", "--dry-run", "--json"], env);
    expect({ code: dry.code, stderr: dry.stderr }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(dry.stdout)).toMatchObject({
      dryRun: true,
      changesDeleted: 30,
      changesPrunedThrough: 30,
    });
    expect(await readChangesError(db, 0)).toBeNull();

    const run = await runCli(["prune", "--json"], env);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(run.stdout)).toMatchObject({
      dryRun: false,
      changesDeleted: 30,
      changesPrunedThrough: 30,
    });
    expect(await readChangesError(db, 0)).toMatchObject({ code: "LS410" });

    const text = await runCli(["prune"], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("0 change(s)");
    expect(text.stdout).toContain("pruned through position 30");
  });

  it("keeps what a feed consumer has not acknowledged, but only for RETENTION_DAYS", async () => {
    // Positions 1..20 are 40 days old, 21..25 an hour old; the consumer acknowledged through 5.
    await seedChanges(db, 20, 5, 0);
    await db.sql`select replica.create_consumer('slow', after => 5)`;
    const tenDays = new Date(Date.now() - 10 * 86_400_000);
    const fiftyDays = new Date(Date.now() - 50 * 86_400_000);
    // --older-than 10d under RETENTION_DAYS 50: the consumer's unacknowledged changes stay.
    const kept = await pruneFinished({ sql: db.sql, before: tenDays, retainedBefore: fiftyDays });
    expect({ deleted: kept.changesDeleted, through: kept.changesPrunedThrough }).toEqual({
      deleted: 5,
      through: 5,
    });
    expect(await db.sql`select count(*)::int as n from replica.receive_changes('slow', 100)`).toEqual([
      { n: 20 },
    ]);
    // Older than RETENTION_DAYS (here 35 d): they go, and the consumer is told rather than left with a gap.
    const gone = await pruneFinished({ sql: db.sql, before: tenDays, retainedBefore: tenDays });
    expect({ deleted: gone.changesDeleted, through: gone.changesPrunedThrough }).toEqual({
      deleted: 15,
      through: 20,
    });
    expect(
      await db.sql`select * from replica.receive_changes('slow')`.then(
        () => null,
        (e: { code?: string }) => e.code,
      ),
    ).toBe("LS410");
  });
});
