import type { Sql, TransactionSql } from "@loops-sync/db";

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
 * in-progress read (pending, running) that arrives late.
 */
export async function upsertJob(
  sql: Sql | TransactionSql,
  merchantId: string,
  job: JobInput,
): Promise<boolean> {
  const rows = await sql`
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
    where r.status in ('pending', 'running') or excluded.status not in ('pending', 'running')
    returning r.id`;
  return rows.length > 0;
}

/** Stores a brand's menu only when its version is newer than the stored one. Returns whether it wrote. */
export async function upsertMenu(
  sql: Sql | TransactionSql,
  merchantId: string,
  menu: MenuInput,
): Promise<boolean> {
  const rows = await sql`
    insert into replica.menus as r (brand_id, merchant_id, version, updated_at, raw, synced_at)
    select m ->> 'brand_id', ${merchantId}, (m ->> 'version')::bigint, (m ->> 'updated_at')::timestamptz, m, now()
    from (select ${JSON.stringify(menu)}::text::jsonb as m) as input
    on conflict (brand_id) do update set
      merchant_id = excluded.merchant_id, version = excluded.version, updated_at = excluded.updated_at,
      raw = excluded.raw, synced_at = now()
    where r.version < excluded.version
    returning r.brand_id`;
  return rows.length > 0;
}
