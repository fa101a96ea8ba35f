import type { Sql, TransactionSql } from "@loops-sync/db";

/** Changes the gateway's writes applied to the mirror (`replica.changes.source = 'write'`), for one resource. */
export interface GatewayWriteCount {
  resource: string;
  changes: number;
}

/**
 * What the partner's backend wrote through the gateway in the last hour, as the feed recorded it, by resource
 * (the gateway's other outcomes, refusals and 429s, are in-process counters on /metrics). Read among the last
 * 100 000 changes (a range of the feed's primary key), so a long feed costs no scan.
 */
export async function readGatewayWrites(sql: Sql | TransactionSql): Promise<GatewayWriteCount[]> {
  const rows = await sql<{ resource: string; changes: number }[]>`
    select resource, count(*)::int as changes
    from replica.changes
    where position > (select coalesce(max(position), 0) - 100000 from replica.changes)
      and source = 'write' and changed_at > now() - interval '1 hour'
    group by resource
    order by resource`;
  return rows.map((r) => ({ resource: r.resource, changes: r.changes }));
}
