import { type Sql, skipRevokedMerchantEvents, type TransactionSql } from "@loops-sync/db";
import type { PauseCause } from "./classify-upstream-failure.ts";

export interface MerchantState {
  /** "unknown" when sync.merchants has no row yet (treated as active). */
  status: "active" | "revoked" | "unknown";
  /**
   * No call for this merchant before then: a 429's Retry-After, or a pause of the application or the
   * merchant (upstream-pause.ts) until its next probe.
   */
  pausedUntil: Date | null;
  /** Why calls are paused when Loops refused them (the application's pause first), else null. */
  refusal: PauseCause | null;
  /** The database's clock when read; events received before it are covered by a fetch that starts now. */
  now: Date;
}

/** The merchant's sync state, read before every upstream call. */
export async function readMerchantState(
  sql: Sql | TransactionSql,
  merchantId: string,
): Promise<MerchantState> {
  const [row] = await sql<
    { status: string | null; paused_until: Date | null; refusal: PauseCause | null; now: Date }[]
  >`
    select m.status, sync.paused_until(${merchantId}) as paused_until, now() as now,
           (select p.cause from sync.upstream_pauses p
            where p.scope in ('application', ${`merchant:${merchantId}`})
            order by p.scope = 'application' desc limit 1) as refusal
    from (select 1) as one
    left join sync.merchants m on m.id = ${merchantId}`;
  return {
    status: merchantStatus(row?.status),
    pausedUntil: row?.paused_until ?? null,
    refusal: row?.refusal ?? null,
    now: row?.now ?? new Date(),
  };
}

/** sync.merchants.status as the worker reads it (no row: "unknown", treated as active). */
export function merchantStatus(stored: string | null | undefined): MerchantState["status"] {
  return stored === "revoked" ? "revoked" : stored === "active" ? "active" : "unknown";
}

/**
 * Holds every call for this merchant until `seconds` from now (a 429's Retry-After). A later pause never
 * shortens an earlier, longer one. Returns the moment calls may resume.
 */
export async function pauseMerchant(
  sql: Sql | TransactionSql,
  merchantId: string,
  seconds: number,
): Promise<Date> {
  const wait = Math.max(1, Math.ceil(seconds));
  const [row] = await sql<{ paused_until: Date }[]>`
    insert into sync.merchants as m (id, learned_from, paused_until)
    values (${merchantId}, 'webhook', now() + make_interval(secs => ${wait}))
    on conflict (id) do update
      set paused_until = greatest(coalesce(m.paused_until, now()), excluded.paused_until)
    returning paused_until`;
  return row!.paused_until;
}

/**
 * Marks the merchant revoked (its data is kept), settles its pending events as skipped_revoked and drops its
 * queued order refreshes: no more calls will be made for it, so nothing else will ever apply them. Safe to
 * repeat (the first revocation time is kept).
 */
export async function revokeMerchant(sql: Sql | TransactionSql, merchantId: string): Promise<void> {
  // The queue rows first: this waits for the merchant's running order batches, which may still need to
  // settle their events through the worker's order applier; locking those events first would hold it up.
  await sql`delete from sync.order_refresh where merchant_id = ${merchantId}`;
  await sql`
    insert into sync.merchants as m (id, learned_from, status, revoked_at)
    values (${merchantId}, 'webhook', 'revoked', now())
    on conflict (id) do update set status = 'revoked', revoked_at = coalesce(m.revoked_at, now())`;
  await skipRevokedMerchantEvents(sql, merchantId);
}

/** The sync.merchants ids currently paused, as graphile-worker job flags (see `merchantFlag`). */
export async function pausedMerchantFlags(sql: Sql): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`select id from sync.merchants where paused_until > now()`;
  return rows.map((r) => merchantFlag(r.id));
}

/** What `merchantFlag` puts before the merchant's id (SQL that builds the flag itself uses it too). */
export const MERCHANT_FLAG_PREFIX = "merchant:";

/** The job flag carried by every job that calls upstream for a merchant, so a paused merchant's jobs wait. */
export function merchantFlag(merchantId: string): string {
  return `${MERCHANT_FLAG_PREFIX}${merchantId}`;
}
