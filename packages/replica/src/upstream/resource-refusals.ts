import type { Sql, TransactionSql } from "@loops-sync/db";
import type { ExtraResource, UpstreamFailure } from "./classify-upstream-failure.ts";

/**
 * Extra resources set aside (sync.resource_refusals): Loops refused a scope for a call off the hot path
 * (classifyUpstreamFailure's `set_aside`), so calls for that resource family wait until `retryAt` while
 * every other call goes on. A repeat doubles the wait (1 h up to 24 h); a call for the family that succeeds
 * clears it. Only these functions write the table.
 */
export interface ResourceRefusal {
  scope: "application" | "merchant";
  /** Null for the application (every merchant). */
  merchantId: string | null;
  resource: ExtraResource;
  code: string;
  message: string | null;
  /** Refusals in a row; the wait doubles with each. */
  refusals: number;
  refusedAt: Date;
  /** No call for the resource before then, except by `loops-sync refresh`. */
  retryAt: Date;
}

/** The wait before a set-aside resource is tried again: the first, doubled per repeat up to the maximum. */
export interface SetAsideBackoff {
  firstSeconds: number;
  maxSeconds: number;
}

export const DEFAULT_SET_ASIDE_BACKOFF: SetAsideBackoff = { firstSeconds: 3600, maxSeconds: 86_400 };

type Db = Sql | TransactionSql;

/**
 * Records a `set_aside` refusal met by a call for `merchantId` (the application's, when its scope says so).
 * A refusal after retry_at doubles the wait; one before it (another process's call in flight, or
 * `loops-sync refresh`) keeps the wait as it is. `first` is true when the resource was not set aside
 * before: log it then, once.
 */
export async function setAsideResource(
  sql: Db,
  failure: Extract<UpstreamFailure, { kind: "set_aside" }>,
  merchantId: string,
  backoff: SetAsideBackoff = DEFAULT_SET_ASIDE_BACKOFF,
): Promise<{ retryAt: Date; first: boolean }> {
  const merchant = failure.scope === "application" ? null : merchantId;
  const [row] = await sql<{ retry_at: Date; first: boolean }[]>`
    insert into sync.resource_refusals as r (scope, merchant_id, resource, code, message, retry_at)
    values (${failure.scope}, ${merchant}, ${failure.resource}, ${failure.cause},
            ${failure.message.slice(0, 500)}, now() + make_interval(secs => ${backoff.firstSeconds}))
    on conflict (scope, merchant_id, resource) do update
    set code = excluded.code, message = excluded.message, refused_at = now(),
        refusals = r.refusals + (r.retry_at <= now())::int,
        retry_at = case when r.retry_at > now() then r.retry_at
                   else now() + make_interval(secs => least(${backoff.maxSeconds}::float8,
                          ${backoff.firstSeconds}::float8 * power(2, r.refusals))) end
    returning retry_at, (xmax = 0) as first`;
  return { retryAt: row!.retry_at, first: row!.first };
}

/**
 * The resources set aside for `merchantId` (its own and the application's), with the time each may be
 * tried again (the later of the two).
 */
export async function setAsideFor(sql: Db, merchantId: string): Promise<Map<ExtraResource, Date>> {
  const rows = await sql<{ resource: string; retry_at: Date }[]>`
    select resource, max(retry_at) as retry_at from sync.resource_refusals
    where merchant_id is null or merchant_id = ${merchantId}
    group by resource`;
  return new Map(rows.map((r) => [r.resource, r.retry_at]));
}

/**
 * A call for `resource` made for `merchantId` succeeded: the application is approved for it and the merchant
 * granted it, so both set-asides go.
 */
export async function clearSetAside(sql: Db, merchantId: string, resource: ExtraResource): Promise<void> {
  await sql`
    delete from sync.resource_refusals
    where resource = ${resource} and (merchant_id is null or merchant_id = ${merchantId})`;
}

/** Every set-aside resource, the application's first. */
export async function listSetAside(sql: Db): Promise<ResourceRefusal[]> {
  const rows = await sql<
    {
      scope: "application" | "merchant";
      merchant_id: string | null;
      resource: string;
      code: string;
      message: string | null;
      refusals: number;
      refused_at: Date;
      retry_at: Date;
    }[]
  >`
    select * from sync.resource_refusals order by scope = 'application' desc, merchant_id, resource`;
  return rows.map((r) => ({
    scope: r.scope,
    merchantId: r.merchant_id,
    resource: r.resource,
    code: r.code,
    message: r.message,
    refusals: r.refusals,
    refusedAt: r.refused_at,
    retryAt: r.retry_at,
  }));
}
