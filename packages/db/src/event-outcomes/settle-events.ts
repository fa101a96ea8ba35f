import type { Sql, TransactionSql } from "../connection/connect.ts";
import type { SettledOutcome } from "./event-outcomes.ts";

/** One event's answer, for {@link settleEvents}. */
export interface SettledEvent {
  id: string;
  outcome: SettledOutcome;
  error?: string | undefined;
}

/** pending → any: records outcomes of events still pending; an event another job already settled keeps its outcome. */
export async function settleEvents(
  sql: Sql | TransactionSql,
  outcomes: readonly SettledEvent[],
): Promise<void> {
  if (outcomes.length === 0) return;
  await sql`
    update sync.events as e set outcome = s.outcome, error = s.error, outcome_at = now()
    from unnest(
      ${outcomes.map((o) => o.id)}::text[],
      ${outcomes.map((o) => o.outcome)}::text[],
      ${outcomes.map((o) => o.error ?? null)}::text[]
    ) as s(id, outcome, error)
    where e.id = s.id and e.outcome = 'pending'`;
}

/** What a refresh's settle did: how many events, and the newest of them (the feed names it as the cause). */
export interface RefreshedSettle {
  count: number;
  newest: { id: string; source: "webhook" | "catchup" | "cli" } | null;
}

/**
 * pending or failed → `outcome`: settles the open events a refresh answered (the caller picks them by
 * route). A failure never overwrites an earlier success of the same refresh.
 */
export async function settleRefreshedEvents(
  sql: Sql | TransactionSql,
  ids: readonly string[],
  outcome: SettledOutcome,
  error?: string,
): Promise<RefreshedSettle> {
  if (ids.length === 0) return { count: 0, newest: null };
  const [newest] = await sql<{ id: string; source: "webhook" | "catchup" | "cli"; count: number }[]>`
    with settled as (
      update sync.events set outcome = ${outcome}, error = ${error ?? null}, outcome_at = now()
      where id = any(${ids as string[]}::text[]) and (outcome = 'pending' or ${outcome} <> 'failed')
      returning id, source, created_at
    )
    select id, source, (select count(*)::int from settled) as count
    from settled order by created_at desc, id desc limit 1`;
  return { count: newest?.count ?? 0, newest: newest ? { id: newest.id, source: newest.source } : null };
}
