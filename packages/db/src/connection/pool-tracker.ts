import type postgres from "postgres";

/** What `connect()` returns, named here so that connect.ts can import this file and not the other way. */
type Sql = postgres.Sql<Record<string, never>>;

/** A pool made by `connect()` and not yet ended, while tracking is on. */
export interface OpenPool {
  /** Order of creation: compare with `PoolTracker.mark()`. */
  seq: number;
  /** The pool's application_name. */
  applicationName: string;
  /** Where `connect()` was called, to find the pool that leaked. */
  createdAt: string;
  sql: Sql;
}

export interface PoolTracker {
  /** The sequence number of the next pool: pools created from now on have `seq >= mark()`. */
  mark(): number;
  /** Pools created at or after `mark` whose `end()` has not been called. */
  openSince(mark: number): OpenPool[];
}

let open: Map<Sql, OpenPool> | undefined;
let next = 0;

/**
 * Turns on tracking of every pool `connect()` makes in this process, for tests that fail on a leaked pool
 * (test/support/pool-leaks.ts). Off unless called, so a service pays nothing for it.
 */
export function trackPools(): PoolTracker {
  open ??= new Map();
  const pools = open;
  return {
    mark: () => next,
    openSince: (mark) => [...pools.values()].filter((p) => p.seq >= mark),
  };
}

/** Called by `connect()`: records the pool and forgets it once its `end()` is called. */
export function notePool(sql: Sql, applicationName: string): Sql {
  if (!open) return sql;
  const pools = open;
  const entry: OpenPool = {
    seq: next++,
    applicationName,
    // The caller's own frames, not the test runner's.
    createdAt: (new Error().stack ?? "")
      .split("\n")
      .slice(3)
      .filter((line) => !line.includes("node_modules"))
      .slice(0, 4)
      .join("\n"),
    sql,
  };
  pools.set(sql, entry);
  const end = sql.end.bind(sql);
  sql.end = (options) => {
    pools.delete(sql);
    return end(options);
  };
  return sql;
}
