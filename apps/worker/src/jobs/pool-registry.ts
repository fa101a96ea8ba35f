import { hostname } from "node:os";
import { setTimeout as delay } from "node:timers/promises";
import type { Logger } from "@loops-sync/config";
import type { Sql } from "@loops-sync/db";
import { backoffMs } from "@loops-sync/loops-client";
import { isConnectionLoss } from "./queue-pool.ts";

export interface PoolRegistryOptions {
  sql: Sql;
  logger: Logger;
  /** A pool whose heartbeat is older than this is dead and its locked jobs are released. Default: 60 000 ms. */
  deadAfterMs?: number;
}

export interface PoolRegistry {
  /** Registers a graphile-worker pool of this process and keeps its heartbeat. */
  register(poolId: string): Promise<void>;
  /**
   * Retires a pool of this process that has stopped (its jobs finished or were released): its heartbeat
   * stops and whatever it still locks is released now. Those are jobs it claimed without knowing (a claim
   * whose answer was lost). While Postgres is away it waits for it, until `signal` aborts or the registry
   * closes; then, or on any other failure, the sweep releases them once the heartbeat is old. Returns the
   * jobs released (0 when that was left to the sweep).
   */
  retire(poolId: string, options?: { signal?: AbortSignal }): Promise<number>;
  /** Releases jobs locked by dead pools now; returns the pools released. */
  sweep(): Promise<string[]>;
  /** Stops heartbeats and removes this process's pools (their jobs were finished or released). */
  close(): Promise<void>;
}

/** A retire waits for Postgres as the queue pool does: doubling, no jitter. */
const WAIT_FOR_POSTGRES = { baseMs: 100, capMs: 2000, jitter: false };

/**
 * Heartbeats of live pools in sync.worker_pools, and a sweep that force-unlocks jobs held by a pool whose
 * heartbeat stopped, or by a pool never registered whose lock is older than ten times `deadAfterMs`. A released job
 * simply runs again; the version gate makes that harmless.
 */
export function createPoolRegistry({ sql, logger, deadAfterMs = 60_000 }: PoolRegistryOptions): PoolRegistry {
  const pools = new Set<string>();
  const beatEvery = Math.max(100, Math.floor(deadAfterMs / 4));
  const timer = setInterval(() => void tick(), beatEvery);
  timer.unref();
  let ticking: Promise<void> | undefined;
  /** Aborted by close(): a retire waiting for Postgres leaves its pool to the sweep. */
  const closed = new AbortController();

  /**
   * Unlocks what `poolId` still holds. The run has stopped, so what its id still locks it never ran: each
   * lost claim took an attempt, and three of them would fail a catch-up for good. The attempt is given back
   * (graphile-worker's reschedule_jobs, which sets one value for the jobs it names: one call per count).
   * One transaction, so it may be sent again after a lost connection.
   */
  const release = (poolId: string) =>
    sql.begin(async (tx) => {
      const locked = await tx<{ id: string; attempts: number }[]>`
        select id, attempts from graphile_worker.jobs where locked_by = ${poolId}`;
      await tx`select graphile_worker.force_unlock_workers(${[poolId]}::text[])`;
      for (const attempts of new Set(locked.map((j) => j.attempts))) {
        const ids = locked.filter((j) => j.attempts === attempts).map((j) => j.id);
        await tx`
          select 1 from graphile_worker.reschedule_jobs(${ids}::bigint[],
            attempts => ${Math.max(0, attempts - 1)}::int)`;
      }
      await tx`delete from sync.worker_pools where id = ${poolId}`;
      return locked.length;
    });

  async function beat(): Promise<void> {
    if (pools.size === 0) return;
    await sql`update sync.worker_pools set heartbeat_at = now() where id = any(${[...pools]}::text[])`;
  }

  async function sweep(): Promise<string[]> {
    const rows = await sql<{ locked_by: string }[]>`
      select distinct j.locked_by from graphile_worker.jobs j
      left join sync.worker_pools p on p.id = j.locked_by
      where j.locked_by is not null
        and j.locked_by <> all(${[...pools]}::text[])
        and (p.heartbeat_at < now() - make_interval(secs => ${deadAfterMs / 1000})
             -- A locker that never registered (an older build, a one-off runner) gets ten times longer.
             or (p.id is null and j.locked_at < now() - make_interval(secs => ${(deadAfterMs * 10) / 1000})))`;
    const dead = rows.map((r) => r.locked_by);
    if (dead.length > 0) {
      await sql`select graphile_worker.force_unlock_workers(${dead}::text[])`;
      logger.warn({ pools: dead }, "released jobs locked by worker pools that stopped heartbeating");
    }
    await sql`
      delete from sync.worker_pools
      where heartbeat_at < now() - make_interval(secs => ${(deadAfterMs * 10) / 1000})`;
    return dead;
  }

  async function tick(): Promise<void> {
    if (ticking) return;
    ticking = (async () => {
      try {
        await beat();
        await sweep();
      } catch (error) {
        logger.warn({ error: (error as Error).message }, "worker heartbeat failed; will retry");
      } finally {
        ticking = undefined;
      }
    })();
    await ticking;
  }

  return {
    async register(poolId) {
      pools.add(poolId);
      await sql`
        insert into sync.worker_pools (id, hostname, pid) values (${poolId}, ${hostname()}, ${process.pid})
        on conflict (id) do update set heartbeat_at = now()`;
    },
    async retire(poolId, { signal } = {}) {
      pools.delete(poolId);
      // A lost claim comes with an outage, so the pool is often retired while Postgres is still away. Left
      // to the sweep, its job would wait for the heartbeat to be `deadAfterMs` old (a minute by default)
      // after Postgres is back; waiting here releases it as soon as Postgres answers again.
      const giveUp = AbortSignal.any([closed.signal, ...(signal ? [signal] : [])]);
      for (let retry = 0; ; retry++) {
        try {
          const released = await release(poolId);
          if (released > 0) {
            logger.warn(
              { pool: poolId, jobs: released },
              "released jobs a retired worker pool held without running",
            );
          }
          return released;
        } catch (error) {
          const message = (error as Error).message;
          if (!isConnectionLoss(error) || giveUp.aborted) {
            logger.warn(
              { pool: poolId, error: message },
              "could not release a retired worker pool's jobs now; the sweep will once its heartbeat is old",
            );
            return 0;
          }
          if (retry === 0) {
            logger.warn(
              { pool: poolId, error: message },
              "Postgres away: a retired worker pool's jobs are released once it is back",
            );
          }
          await delay(backoffMs(retry, WAIT_FOR_POSTGRES), undefined, { signal: giveUp }).catch(() => {});
        }
      }
    },
    sweep,
    async close() {
      closed.abort();
      clearInterval(timer);
      await ticking;
      if (pools.size > 0) await sql`delete from sync.worker_pools where id = any(${[...pools]}::text[])`;
      pools.clear();
    },
  };
}
