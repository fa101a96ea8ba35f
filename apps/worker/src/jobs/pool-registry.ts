import { hostname } from "node:os";
import type { Logger } from "@loops-sync/config";
import type { Sql } from "@loops-sync/db";

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
   * whose answer was lost). If Postgres cannot be reached, the sweep releases them once the heartbeat is old.
   * Returns the jobs released (0 when that was left to the sweep).
   */
  retire(poolId: string): Promise<number>;
  /** Releases jobs locked by dead pools now; returns the pools released. */
  sweep(): Promise<string[]>;
  /** Stops heartbeats and removes this process's pools (their jobs were finished or released). */
  close(): Promise<void>;
}

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
    async retire(poolId) {
      pools.delete(poolId);
      try {
        const released = await sql.begin(async (tx) => {
          const locked = await tx<{ id: string; attempts: number }[]>`
            select id, attempts from graphile_worker.jobs where locked_by = ${poolId}`;
          await tx`select graphile_worker.force_unlock_workers(${[poolId]}::text[])`;
          // The run has stopped, so what its id still locks it never ran: each lost claim took an attempt,
          // and three of them would fail a catch-up for good. The attempt is given back (graphile-worker's
          // reschedule_jobs, which sets one value for the jobs it names: one call per count).
          for (const attempts of new Set(locked.map((j) => j.attempts))) {
            const ids = locked.filter((j) => j.attempts === attempts).map((j) => j.id);
            await tx`
              select 1 from graphile_worker.reschedule_jobs(${ids}::bigint[],
                attempts => ${Math.max(0, attempts - 1)}::int)`;
          }
          await tx`delete from sync.worker_pools where id = ${poolId}`;
          return locked.length;
        });
        if (released > 0) {
          logger.warn(
            { pool: poolId, jobs: released },
            "released jobs a retired worker pool held without running",
          );
        }
        return released;
      } catch (error) {
        logger.warn(
          { pool: poolId, error: (error as Error).message },
          "could not release a retired worker pool's jobs now; the sweep will once its heartbeat is old",
        );
        return 0;
      }
    },
    sweep,
    async close() {
      clearInterval(timer);
      await ticking;
      if (pools.size > 0) await sql`delete from sync.worker_pools where id = any(${[...pools]}::text[])`;
      pools.clear();
    },
  };
}
