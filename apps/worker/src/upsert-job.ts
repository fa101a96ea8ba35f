import type { Sql, TransactionSql } from "@loops-sync/db";
import type { ResourceChange } from "@loops-sync/replica";

/** GET /jobs/{id} as the replica needs it; other fields are kept in `raw`. */
export interface JobInput {
  id: string;
  type: string;
  status: string;
}

/** GET /brands/{id}/menu as the replica needs it; the whole menu is kept in `raw`. */
export interface MenuInput {
  brand_id: string;
  version: number;
}

/**
 * Stores a background job. Jobs carry no version, so the gate is the lifecycle: a finished job
 * (succeeded, partially_failed, failed, or any status we do not know) is never overwritten by an
 * in-progress read (pending, running) that arrives late; a read identical to the stored one writes nothing.
 * Returns the change, if any, for the feed.
 */
export async function upsertJob(
  sql: Sql | TransactionSql,
  merchantId: string,
  job: JobInput,
): Promise<ResourceChange[]> {
  const rows = await sql<{ id: string; status: string; previous_status: string | null; inserted: boolean }[]>`
    with prev as (select status from replica.jobs where id = ${job.id}),
    written as (
      insert into replica.jobs as r (
        id, merchant_id, type, brand_id, status, created_at, completed_at, raw, synced_at
      )
      select j ->> 'id', ${merchantId}, j ->> 'type', j ->> 'brand_id', j ->> 'status',
             (j ->> 'created_at')::timestamptz, (j ->> 'completed_at')::timestamptz, j, now()
      from (select ${JSON.stringify(job)}::text::jsonb as j) as input
      on conflict (id) do update set
        type = excluded.type, brand_id = excluded.brand_id, status = excluded.status,
        created_at = excluded.created_at, completed_at = excluded.completed_at, raw = excluded.raw,
        synced_at = now()
      where (r.status in ('pending', 'running') or excluded.status not in ('pending', 'running'))
        and r.raw is distinct from excluded.raw
      returning r.id, r.status
    )
    select w.id, w.status, p.status as previous_status, p.status is null as inserted
    from written w left join prev p on true`;
  return rows.map((r) => ({
    resource: "job",
    resourceId: r.id,
    merchantId,
    operation: r.inserted ? "insert" : "update",
    status: r.status,
    previousStatus: r.previous_status,
  }));
}

/**
 * Stores a brand's menu only when its version is newer than the stored one. Returns the change, if any, for
 * the feed (resource `menu`, named by its brand).
 */
export async function upsertMenu(
  sql: Sql | TransactionSql,
  merchantId: string,
  menu: MenuInput,
): Promise<ResourceChange[]> {
  const rows = await sql<{ brand_id: string; version: number; previous_version: number | null }[]>`
    with prev as (select version from replica.menus where brand_id = ${menu.brand_id}),
    written as (
      insert into replica.menus as r (brand_id, merchant_id, version, updated_at, raw, synced_at)
      select m ->> 'brand_id', ${merchantId}, (m ->> 'version')::bigint, (m ->> 'updated_at')::timestamptz, m,
             now()
      from (select ${JSON.stringify(menu)}::text::jsonb as m) as input
      on conflict (brand_id) do update set
        merchant_id = excluded.merchant_id, version = excluded.version, updated_at = excluded.updated_at,
        raw = excluded.raw, synced_at = now()
      where r.version < excluded.version
      returning r.brand_id, r.version
    )
    select w.brand_id, w.version, p.version as previous_version from written w left join prev p on true`;
  return rows.map((r) => ({
    resource: "menu",
    resourceId: r.brand_id,
    merchantId,
    operation: r.previous_version === null ? "insert" : "update",
    version: r.version,
    previousVersion: r.previous_version,
  }));
}
