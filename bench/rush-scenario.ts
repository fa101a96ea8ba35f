// What `bench/rush.ts` adds to the steady rush (issue 52): a worker replaced mid-rush, merchants onboarded as
// it starts, every merchant's reconcile due in the window; and how the calls split between live and background.
import type { Sql } from "@loops-sync/db";
import type { Sandbox } from "@loops-sync/sandbox";
import { type RunningService, startWorkerProcess } from "./service-processes.ts";
import { watchFeedVersions } from "./watch-feed-versions.ts";
import { watchReplicaVersions } from "./watch-replica-versions.ts";

/** Sightings of each order's versions: [version, when] in the order they came. */
export type Sightings = Map<string, [number, number][]>;

/**
 * Every sighting of an order version, timed by `now` (the sandbox's clock, the one its events and delivery
 * attempts use): committed to `replica.orders` (`mirrored`) and read by a feed reader (`read`).
 */
export async function watchVersionSightings(
  sql: Sql,
  now: () => number,
): Promise<{ mirrored: Sightings; read: Sightings; close(): Promise<void> }> {
  const mirrored: Sightings = new Map();
  const read: Sightings = new Map();
  const note = (into: Sightings) => (orderId: string, version: number) => {
    const list = into.get(orderId) ?? [];
    list.push([version, now()]);
    into.set(orderId, list);
  };
  const replicaWatch = await watchReplicaVersions(sql, note(mirrored));
  const feedWatch = await watchFeedVersions(sql, note(read));
  return {
    mirrored,
    read,
    async close() {
      await replicaWatch.close();
      await feedWatch.close();
    },
  };
}

/** Routes only background work calls (catch-up, backfill, reconcile, channels); orders are live or confirm. */
const BACKGROUND = /^GET \/(events|merchant|connection|locations|brands|channels)/;

/** API calls of background routes in a stats snapshot's `apiCalls`. */
export function backgroundCalls(apiCalls: Record<string, number>): number {
  return Object.entries(apiCalls)
    .filter(([route]) => BACKGROUND.test(route))
    .reduce((n, [, c]) => n + c, 0);
}

/**
 * New merchants join as the rush starts: recorded active (as a confirmed or configured merchant is); the
 * worker's trickles queue each one's first catch-up (a backfill from the order list) and first reconcile,
 * ahead of routine background work.
 */
export async function onboardMerchants(sql: Sql, ids: readonly string[]): Promise<void> {
  await sql`
    insert into sync.merchants (id, learned_from, status)
    select id, 'cli', 'active' from unnest(${ids as string[]}::text[]) id on conflict (id) do nothing`;
}

/** Of `ids`, how many have had their first catch-up and their first reconcile end. */
export async function firstRunsDone(
  sql: Sql,
  ids: readonly string[],
): Promise<{ caughtUp: number; reconciled: number }> {
  const [row] = await sql<{ caught_up: number; reconciled: number }[]>`
    select (select count(*)::int from sync.cursors
            where merchant_id = any(${ids as string[]}::text[]) and last_run_finished_at is not null) as caught_up,
           (select count(*)::int from sync.merchants
            where id = any(${ids as string[]}::text[]) and reconciled_at is not null) as reconciled`;
  return { caughtUp: row?.caught_up ?? 0, reconciled: row?.reconciled ?? 0 };
}

/** Every merchant's reconcile due now: its last run two hours ago (what a tick did to every merchant). */
export async function makeReconcilesDue(sql: Sql): Promise<void> {
  await sql`update sync.merchants set reconciled_at = now() - interval '2 hours' where status = 'active'`;
}

/**
 * A rolling deploy: a new worker starts, the old one stops `overlapMs` later. Answers the new worker and the
 * background calls Loops saw in the 15 s after the new one started (its start-up's cost).
 */
export async function replaceWorker(
  old: RunningService,
  env: Record<string, string>,
  sandbox: Sandbox,
  overlapMs = 5000,
): Promise<{ worker: RunningService; startupCalls: Promise<number> }> {
  const before = backgroundCalls(sandbox.stats().apiCalls);
  const worker = await startWorkerProcess(env, { concurrency: 8, poolSize: 10 });
  const startupCalls = new Promise<number>((resolve) =>
    setTimeout(() => resolve(backgroundCalls(sandbox.stats().apiCalls) - before), 15_000),
  );
  setTimeout(() => void old.process.stop(), overlapMs);
  return { worker, startupCalls };
}

/**
 * Waits (at most `timeoutMs`) until a start's catch-up and resource refreshes are done: no job due and every
 * merchant reconciled, so what follows begins on a quiet worker.
 */
export async function waitForQuietQueue(sql: Sql, timeoutMs: number): Promise<void> {
  for (const until = performance.now() + timeoutMs; performance.now() < until; ) {
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int + (select count(*)::int from sync.merchants where reconciled_at is null) as n
      from graphile_worker.jobs where attempts < max_attempts and run_at <= now()`;
    if (row?.n === 0) return;
    await new Promise((r) => setTimeout(r, 500));
  }
}
