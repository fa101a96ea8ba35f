import type { Sql } from "@loops-sync/db";

/** Changes copied into the delivery queue per scan; a full scan is followed by another at once. */
export const SCAN_BATCH = 2000;

/**
 * The first worker that forwards starts after the newest change committed then (every change at or below it
 * is already visible: docs/decisions.md, "The change feed is gap-free by commit order"); later ones keep the
 * stored position. Records the endpoint (without its query or credentials) and that a forwarder runs, for status.
 */
export async function startForwarding(sql: Sql, endpoint: string): Promise<void> {
  await sql`
    insert into sync.forward_progress (scanned_through, endpoint, seen_at)
    select coalesce(max(position), 0), ${endpoint}, now() from replica.changes
    on conflict (singleton) do update set endpoint = excluded.endpoint, seen_at = now()`;
}

/**
 * Copies the feed's changes after the scan's position into sync.forward_deliveries (only `resources`, when
 * given) and moves the position on, in one statement. The progress row is locked with SKIP LOCKED: while one
 * worker scans, the others skip it (and find the copied changes on their next claim). Returns how many
 * changes were read (SCAN_BATCH means more may wait).
 */
export async function scanChanges(sql: Sql, resources: readonly string[]): Promise<number> {
  const [row] = await sql<{ scanned: number }[]>`
    with progress as (
      select scanned_through from sync.forward_progress for update skip locked
    ), batch as (
      select c.position, c.resource, c.resource_id, c.changed_at
      from replica.changes c, progress p
      where c.position > p.scanned_through
      order by c.position
      limit ${SCAN_BATCH}
    ), queued as (
      insert into sync.forward_deliveries (position, resource, resource_id, changed_at, age_from)
      select position, resource, resource_id, changed_at, changed_at from batch
      where cardinality(${resources as string[]}::text[]) = 0 or resource = any(${resources as string[]}::text[])
      on conflict (position) do nothing
    ), moved as (
      update sync.forward_progress set scanned_through = (select max(position) from batch)
      where exists (select 1 from batch)
    )
    select count(*)::int as scanned from batch`;
  return row?.scanned ?? 0;
}
