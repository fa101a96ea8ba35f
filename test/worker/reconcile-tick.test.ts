// The reconcile's run over every merchant is recorded like catch-up's: one row in sync.scheduled_ticks, counted
// by each merchant's job, ended by the last; its jobs come after every other due job; a run still going when the
// next starts is an overrun.
import { createWorkerMetrics } from "@loops-sync/worker";
import {
  RECONCILE_PRIORITY,
  refreshResourcesTask,
} from "@loops-sync/worker/reconcile/refresh-resources-task";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createHarness, type Harness } from "../support/worker-harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

interface TickRow {
  items: number;
  items_done: number;
  finished: boolean;
  overruns: number;
  last_overran: boolean;
}
const reconcileTick = async () =>
  (
    await h.db.sql<TickRow[]>`
      select items, items_done, finished_at is not null as finished, overruns::int, last_overran
      from sync.scheduled_ticks where task = 'reconcile'`
  )[0];

describe("the reconcile as a scheduled run", () => {
  it("queues each merchant behind the due event jobs and records the run until its last merchant", async () => {
    const merchants = await h.db.sql<{ id: string }[]>`
      insert into sync.merchants (id, learned_from) values ('mer_demo_1', 'config'), ('mer_demo_2', 'config')
      on conflict (id) do nothing returning id`;
    expect(merchants).toHaveLength(2);
    // A run already going (one merchant of two left) when this one starts: an overrun.
    await h.db.sql`
      insert into sync.scheduled_ticks (task, started_at, items, items_done)
      values ('reconcile', now() - interval '20 minutes', 2, 1)`;
    await h.worker({ refreshResourcesAtStart: true });

    const done = await waitFor(
      async () => {
        const row = await reconcileTick();
        return row?.finished ? row : undefined;
      },
      { what: "the reconcile run finished" },
    );
    expect(done).toEqual({ items: 2, items_done: 2, finished: true, overruns: 1, last_overran: false });
    const [brand] = await h.db.sql<{ n: number }[]>`select count(*)::int as n from replica.brands`;
    expect(brand!.n).toBeGreaterThan(0);
  });

  it("adds its per-merchant jobs at a lower priority than event jobs", async () => {
    await Promise.all(h.workers.map((w) => w.stop()));
    const fanOut = refreshResourcesTask(
      { sql: h.db.sql, metrics: createWorkerMetrics() } as unknown as Parameters<
        typeof refreshResourcesTask
      >[0],
      "*/15 * * * *",
    );
    await fanOut({}, {} as never);
    const jobs = await h.db.sql<{ task_identifier: string; priority: number }[]>`
      select task_identifier, priority from graphile_worker.jobs order by task_identifier`;
    expect(jobs).toEqual([
      { task_identifier: "reconcile_merchant", priority: RECONCILE_PRIORITY },
      { task_identifier: "reconcile_merchant", priority: RECONCILE_PRIORITY },
      { task_identifier: "refresh_channels", priority: RECONCILE_PRIORITY },
    ]);
    expect(RECONCILE_PRIORITY).toBeGreaterThan(0);
    expect(await reconcileTick()).toMatchObject({ items: 2, items_done: 0, finished: false });
  });
});
