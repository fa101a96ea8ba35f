import type { Sql } from "../connection/connect.ts";

/** Where a reset moves the consumer: after a position, or before the first change written at or after a time. */
export type ResetTo = { to: number } | { since: string | Date };

/**
 * `sync.reset_consumer`: the consumer hands out again every change after the position, its leases forgotten
 * (an operator's move, not a consumer role's). A time resolves to the position just before the first change
 * written at or after it, in the same transaction. Returns the position the consumer now stands at.
 */
export async function resetConsumer(sql: Sql, name: string, target: ResetTo): Promise<number> {
  const since = "since" in target ? new Date(target.since) : null;
  const to = "to" in target ? target.to : null;
  return sql.begin(async (tx) => {
    const [at] = await tx<{ p: string }[]>`
      select (case when ${since}::timestamptz is null then ${to}::bigint
                   else sync.position_before(${since}::timestamptz) end)::text as p`;
    await tx`select sync.reset_consumer(${name}, ${at!.p}::bigint)`;
    return Number(at!.p);
  });
}
