// Prune and sync.refused_events: the events catch-up could never store are kept for RETENTION_DAYS after
// they were refused, then `loops-sync prune` deletes them and counts them (`refusedEventsDeleted`); a dry
// run only counts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { runCli } from "../support/operator-run.ts";

describe("loops-sync prune and refused events", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.sql`
      insert into sync.refused_events (id, merchant_id, type, created_at, source, reason, refused_at)
      select 'evt_refused_' || i, 'mer_1', 'order.updated', now() - age, 'catchup',
             '22P05: unsupported Unicode escape sequence', now() - age
      from (values (1, interval '40 days'), (2, interval '36 days'), (3, interval '34 days'),
                   (4, interval '1 hour')) as v(i, age)`;
  });
  afterAll(async () => {
    await db?.drop();
  });

  const left = async () =>
    (await db.sql<{ id: string }[]>`select id from sync.refused_events order by id`).map((r) => r.id);

  it("counts the old ones on a dry run, then deletes them and reports how many", async () => {
    const env = { DATABASE_URL: db.url, RETENTION_DAYS: "35" };
    const dry = await runCli(["prune", "--dry-run", "--json"], env);
    expect({ code: dry.code, stderr: dry.stderr }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, refusedEventsDeleted: 2 });
    expect(await left()).toHaveLength(4);

    const run = await runCli(["prune", "--json"], env);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    const summary = JSON.parse(run.stdout) as Record<string, unknown>;
    // The fields scripts read before stay; the new one is added.
    expect(Object.keys(summary)).toEqual([
      "before",
      "dryRun",
      "eventsDeleted",
      "eventsKept",
      "jobsDeleted",
      "changesDeleted",
      "changesPrunedThrough",
      "refusedEventsDeleted",
      "batches",
    ]);
    expect(summary).toMatchObject({ dryRun: false, refusedEventsDeleted: 2 });
    expect(await left()).toEqual(["evt_refused_3", "evt_refused_4"]);

    const text = await runCli(["prune", "--older-than", "30m"], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^prune: deleted 0 event\(s\), 0 failed job\(s\), 0 change\(s\) and 2 refused event\(s\) older than /,
    );
    expect(await left()).toEqual([]);
  });
});
