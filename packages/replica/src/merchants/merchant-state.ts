import {
  type ChangeInput,
  type ChangeSource,
  dropQueuedOrders,
  markMerchantRevoked,
  recordChanges,
  type Sql,
  skipRevokedMerchantEvents,
  type TransactionSql,
} from "@loops-sync/db";
import type { PauseCause } from "../upstream/classify-upstream-failure.ts";

export interface MerchantState {
  /** "unknown" when sync.merchants has no row yet (treated as active). */
  status: "active" | "revoked" | "unknown";
  /**
   * No call for this merchant before then: a 429's Retry-After, or a pause of the application or the
   * merchant (upstream/upstream-pause.ts) until its next probe.
   */
  pausedUntil: Date | null;
  /** Why calls are paused when Loops refused them (the application's pause first), else null. */
  refusal: PauseCause | null;
  /** The database's clock when read; events received before it are covered by a fetch that starts now. */
  now: Date;
  /** sync.merchants.connection_id: the connection calls made now are made under (null: none known). */
  connectionId: string | null;
}

/** The merchant's sync state, read before every upstream call. */
export async function readMerchantState(
  sql: Sql | TransactionSql,
  merchantId: string,
): Promise<MerchantState> {
  const [row] = await sql<
    {
      status: string | null;
      paused_until: Date | null;
      refusal: PauseCause | null;
      now: Date;
      connection_id: string | null;
    }[]
  >`
    select m.status, m.connection_id, sync.paused_until(${merchantId}) as paused_until, now() as now,
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
    connectionId: row?.connection_id ?? null,
  };
}

/** sync.merchants.status as the worker reads it (no row: "unknown", treated as active). */
export function merchantStatus(stored: string | null | undefined): MerchantState["status"] {
  return stored === "revoked" ? "revoked" : stored === "active" ? "active" : "unknown";
}

/** What `revokeMerchant` did: whether the revocation was stale (only its connection's row revoked), and the
 * feed's rows for the connection rows it changed. */
export interface RevocationDone {
  stale: boolean;
  changes: ChangeInput[];
}

/** What a revocation knows: which connection, and what told us. */
export interface Revocation {
  /**
   * The connection revoked (a connection.revoked event's connection_id). Absent: whatever connection the
   * merchant has (a 403 connection_not_active names none).
   */
  connectionId?: string | null | undefined;
  /**
   * For a 403 (no connection named): the connection the merchant named when the refused call was made. A
   * reconnect confirmed since (the merchant names another one) makes the refusal stale: it revokes only that
   * connection's row, never the merchant it no longer speaks of.
   */
  refusedUnder?: string | null | undefined;
  /** The event that told us (connection.revoked), for the change feed. */
  eventId?: string | null | undefined;
  /** How the change feed names the revocation's change. Default: "reconcile". */
  source?: ChangeSource | undefined;
}

/**
 * A run's error when its 403 connection_not_active was answered under a connection the merchant has left since
 * (it reconnected while the run called): only that connection was revoked, and the next run goes on.
 */
export const STALE_REFUSAL =
  "Loops refused a call made under the merchant's previous connection (403 connection_not_active); the merchant has reconnected since, and the next run goes on under the new connection";

/**
 * Whether a revocation of `connectionId` speaks of a connection the merchant has left already: its state
 * names another connection (a reconnect came since, or is being confirmed), or, when it names none, another
 * mirrored connection of the merchant is active. Such a revocation (a late or redelivered connection.revoked)
 * revokes only that connection's row, never the merchant. A 403 names no connection: it is stale only when
 * the connection its call was made under (`Revocation.refusedUnder`) is no longer the merchant's.
 */
export async function revocationIsStale(
  sql: Sql | TransactionSql,
  merchantId: string,
  connectionId: string | null | undefined,
): Promise<boolean> {
  if (!connectionId) return false;
  const [row] = await sql<{ stale: boolean }[]>`
    select coalesce(
      (select m.connection_id is distinct from ${connectionId}
       from sync.merchants m where m.id = ${merchantId} and m.connection_id is not null),
      exists (select 1 from replica.connections c
              where c.merchant_id = ${merchantId} and c.status = 'active' and c.id <> ${connectionId})
    ) as stale`;
  return row?.stale ?? false;
}

/**
 * Marks the merchant revoked (its data is kept): sync.merchants says `revoked` (with the connection), its
 * mirrored connection's row in replica.connections says `revoked` (a row is added when the revoked connection
 * was never mirrored), its pending events are settled as skipped_revoked and its queued order refreshes
 * dropped: no more calls will be made for it, so nothing else will ever apply them. A stale revocation
 * (`revocationIsStale`) revokes only its own connection's row. Safe to repeat (the first revocation time is
 * kept). Returns whether it was stale and the feed's rows for the connection rows it changed: the caller
 * records them last (`recordChanges`), or calls `revokeMerchantAndRecord`.
 */
export async function revokeMerchant(
  sql: Sql | TransactionSql,
  merchantId: string,
  revocation: Revocation = {},
): Promise<RevocationDone> {
  const named = revocation.connectionId ?? null;
  const stale = await revocationIsStale(sql, merchantId, named ?? revocation.refusedUnder ?? null);
  // A stale refusal speaks of the connection it was made under; a current one, of the merchant's.
  const connectionId = stale && !named ? (revocation.refusedUnder ?? null) : named;
  if (!stale) {
    // The queue rows first: this waits for the merchant's running order batches, which may still need to
    // settle their events through the worker's order applier; locking those events first would hold it up.
    await dropQueuedOrders(sql, merchantId);
    await markMerchantRevoked(sql, merchantId, connectionId);
    await skipRevokedMerchantEvents(sql, merchantId);
  }
  const rows = await sql<{ id: string; previous_status: string | null }[]>`
    with old as (
      select id, status from replica.connections
      where merchant_id = ${merchantId} and status <> 'revoked'
        and (${connectionId}::text is null or id = ${connectionId})
      for update
    ),
    revoked as (
      update replica.connections r
      set status = 'revoked', raw = jsonb_set(r.raw, '{status}', '"revoked"'), synced_at = now()
      from old where r.id = old.id
      returning r.id, old.status as previous_status
    ),
    -- Never mirrored (say a merchant of LOOPS_MERCHANT_IDS revoked before its first reconcile): the row says
    -- what is known, so the feed and doctor still see the revocation.
    added as (
      insert into replica.connections (id, merchant_id, status, raw)
      select ${connectionId}, ${merchantId}, 'revoked',
             jsonb_build_object('id', ${connectionId}::text, 'merchant_id', ${merchantId}::text, 'status', 'revoked')
      where ${connectionId}::text is not null
        and not exists (select 1 from replica.connections where id = ${connectionId})
      on conflict (id) do nothing
      returning id, null::text as previous_status
    )
    select * from revoked union all select * from added`;
  const changes = rows.map(
    (r): ChangeInput => ({
      resource: "connection",
      resourceId: r.id,
      merchantId,
      operation: r.previous_status === null ? "insert" : "update",
      status: "revoked",
      previousStatus: r.previous_status,
      source: revocation.source ?? "reconcile",
      eventId: revocation.eventId ?? null,
    }),
  );
  return { stale, changes };
}

/** `revokeMerchant` in a transaction of its own, with its changes in the feed. Returns whether it was stale. */
export async function revokeMerchantAndRecord(
  sql: Sql,
  merchantId: string,
  revocation: Revocation = {},
): Promise<boolean> {
  return await sql.begin(async (tx) => {
    const { stale, changes } = await revokeMerchant(tx, merchantId, revocation);
    await recordChanges(tx, changes);
    return stale;
  });
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
