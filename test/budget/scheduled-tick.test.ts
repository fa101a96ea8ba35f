import { nextCronTick, runInLanes, startScheduledTick } from "@loops-sync/replica";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());

describe("scheduled ticks over many merchants", () => {
  it("finds the next tick of a cron schedule in UTC", () => {
    const at = new Date("2026-11-26T10:03:30Z");
    expect(nextCronTick("*/5 * * * *", at)?.toISOString()).toBe("2026-11-26T10:05:00.000Z");
    expect(nextCronTick("0 3 * * *", at)?.toISOString()).toBe("2026-11-27T03:00:00.000Z");
  });

  it("records a run that ended after the next tick was due as overran, and counts it", async () => {
    const tick = await startScheduledTick(db.sql, {
      task: "test_tick",
      cron: "*/5 * * * *",
      items: 3,
      now: new Date(Date.now() - 6 * 60_000),
    });
    for (let i = 0; i < 3; i++) tick.itemDone();
    expect(await tick.finish()).toMatchObject({ overran: true });
    const onTime = await startScheduledTick(db.sql, { task: "test_tick", cron: "0 0 * * *", items: 1 });
    onTime.itemDone();
    expect(await onTime.finish()).toMatchObject({ overran: false });
    const [row] = await db.sql<{ overruns: number; items_done: number; last_overran: boolean }[]>`
      select overruns, items_done, last_overran from sync.scheduled_ticks where task = 'test_tick'`;
    expect(row).toEqual({ overruns: 1, items_done: 1, last_overran: false });
  });

  it("runs items a few at a time, in order, with results in item order", async () => {
    let running = 0;
    let most = 0;
    const results = await runInLanes([5, 1, 4, 2, 3, 0], 2, async (n) => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, n));
      running--;
      return n * 10;
    });
    expect(results).toEqual([50, 10, 40, 20, 30, 0]);
    expect(most).toBe(2);
  });
});
