import type { Sql, TransactionSql } from "@loops-sync/db";
import { inTransaction } from "../in-transaction.ts";
import type { MirrorChange } from "./mirror-change.ts";

/** GET /jobs/{id} as the replica needs it; the rest (errors, results) is kept in `raw`. */
export interface JobInput {
  id: string;
  type: string;
  status: string;
  brand_id?: string | null;
  results?: unknown;
}

const IN_PROGRESS = ["pending", "running"];

/**
 * Stores a background job and its results (one replica.job_results row per location and delivery app), in
 * one transaction. Jobs carry no version, so the gate is the lifecycle: a finished job is never overwritten
 * by an in-progress read that arrives late, and a read equal to the stored one writes nothing. Returns the
 * change, or undefined when nothing was written.
 */
export async function applyJob(
  sql: Sql | TransactionSql,
  merchantId: string,
  job: JobInput,
): Promise<MirrorChange | undefined> {
  return await inTransaction(sql, async (tx) => {
    const [stored] = await tx<{ status: string }[]>`
      select status from replica.jobs where id = ${job.id} for update`;
    if (stored && !IN_PROGRESS.includes(stored.status) && IN_PROGRESS.includes(job.status)) return undefined;
    const json = JSON.stringify(job);
    const written = await tx`
      insert into replica.jobs as r (
        id, merchant_id, type, brand_id, status, created_at, completed_at, raw, synced_at
      )
      select j ->> 'id', ${merchantId}, j ->> 'type', j ->> 'brand_id', j ->> 'status',
             (j ->> 'created_at')::timestamptz, (j ->> 'completed_at')::timestamptz, j, now()
      from (select ${json}::text::jsonb as j) as input
      on conflict (id) do update set
        type = excluded.type, brand_id = excluded.brand_id, status = excluded.status,
        created_at = excluded.created_at, completed_at = excluded.completed_at, raw = excluded.raw,
        synced_at = now()
      where (r.status in ('pending', 'running') or excluded.status not in ('pending', 'running'))
        and r.raw is distinct from excluded.raw
      returning r.id`;
    if (written.length === 0) return undefined;
    await tx`delete from replica.job_results where job_id = ${job.id}`;
    await tx`
      insert into replica.job_results (
        job_id, position, merchant_id, brand_id, location_id, channel_connection_id, channel, status, errors
      )
      select ${job.id}, (n - 1)::int, ${merchantId}, ${json}::text::jsonb ->> 'brand_id', r ->> 'location_id',
             r ->> 'channel_connection_id', coalesce(r ->> 'channel', ''), coalesce(r ->> 'status', 'pending'),
             case jsonb_typeof(r -> 'errors') when 'array' then r -> 'errors' else '[]' end
      from jsonb_array_elements(
        case jsonb_typeof(${json}::text::jsonb -> 'results')
          when 'array' then ${json}::text::jsonb -> 'results' else '[]' end
      ) with ordinality as x(r, n)
      where r ->> 'location_id' is not null`;
    return {
      resource: "job",
      resourceId: job.id,
      merchantId,
      operation: stored ? "update" : "insert",
      status: job.status,
      previousStatus: stored?.status ?? null,
    };
  });
}
