import type { TransactionSql } from "@loops-sync/db";
import type { ApplyOrderResult } from "./apply-orders-if-newer.ts";

/** One order.status_changed payload: the order moved from `previousStatus` to `status` at `version`. */
export interface StatusStep {
  eventId: string;
  version: number;
  previousStatus: string;
  status: string;
  /** The event's created_at, as the event wrote it: the history entry's `at` and the order's updated_at. */
  at: string;
}

/**
 * Status events of one order that chain onto the stored row: the first step's version is the stored version
 * + 1 and its previous_status the stored status, each later step continues the one before.
 */
export interface StatusChain {
  orderId: string;
  merchantId: string;
  fromVersion: number;
  fromStatus: string;
  steps: readonly StatusStep[];
}

/** True when `steps` continue (`fromVersion`, `fromStatus`) one version at a time, each from the last status. */
export function chains(fromVersion: number, fromStatus: string, steps: readonly StatusStep[]): boolean {
  let version = fromVersion;
  let status = fromStatus;
  for (const step of steps) {
    if (step.version !== version + 1 || step.previousStatus !== status) return false;
    version = step.version;
    status = step.status;
  }
  return steps.length > 0;
}

/**
 * Applies status chains from their events' payloads, with no call to Loops, in ONE statement whose WHERE is
 * the gate: the stored row must still be at the chain's first version and status (of the same merchant), so
 * a payload that does not chain (a concurrent fetch won, a lost event, a different status) is never applied.
 * Writes status, version, updated_at and the history entries (`at` = each event's created_at) into the row,
 * its upstream JSON and replica.order_status_history; leaves `fetched_version` below `version`, so the row
 * is unconfirmed (migration 0019) until a fetch confirms it. Rows are locked in id order, as the fetched
 * apply does. `changed` is false for a chain the gate refused.
 */
export async function applyStatusFromEvents(
  tx: TransactionSql,
  chainsToApply: readonly StatusChain[],
): Promise<ApplyOrderResult[]> {
  const valid = chainsToApply.filter((c) => chains(c.fromVersion, c.fromStatus, c.steps));
  if (valid.length === 0) return [];
  const sorted = [...valid].sort((a, b) => (a.orderId < b.orderId ? -1 : a.orderId > b.orderId ? 1 : 0));
  const json = JSON.stringify(
    sorted.map((c) => {
      const last = c.steps.at(-1)!;
      return {
        id: c.orderId,
        merchant_id: c.merchantId,
        from_version: c.fromVersion,
        from_status: c.fromStatus,
        version: last.version,
        status: last.status,
        at: last.at,
        event_id: last.eventId,
        history: c.steps.map((s) => ({ status: s.status, at: s.at })),
      };
    }),
  );
  const rows = await tx<
    { id: string; changed: boolean; version: number; status: string; event_id: string; merchant_id: string }[]
  >`
    with input as (
      select * from jsonb_to_recordset(${json}::text::jsonb) as i(
        id text, merchant_id text, from_version bigint, from_status text, version bigint, status text,
        at text, event_id text, history jsonb
      )
    ),
    moved as (
      update replica.orders r
      set status = i.status, version = i.version, updated_at = i.at::timestamptz,
          raw = jsonb_set(jsonb_set(jsonb_set(jsonb_set(r.raw,
                  '{status}', to_jsonb(i.status)), '{version}', to_jsonb(i.version)),
                  '{updated_at}', to_jsonb(i.at)),
                  '{status_history}', coalesce(nullif(r.raw -> 'status_history', 'null'), '[]') || i.history),
          synced_at = now(), last_change_event_id = i.event_id, last_change_source = 'event',
          unconfirmed_since = coalesce(r.unconfirmed_since, now())
      from input i
      where r.id = i.id and r.merchant_id = i.merchant_id and r.version = i.from_version
        and r.status = i.from_status
      returning r.id, jsonb_array_length(r.raw -> 'status_history') as entries
    ),
    history as (
      insert into replica.order_status_history as c (order_id, position, status, at)
      select m.id, (m.entries - jsonb_array_length(i.history) + n - 1)::int, e ->> 'status',
             (e ->> 'at')::timestamptz
      from moved m join input i on i.id = m.id
      cross join lateral jsonb_array_elements(i.history) with ordinality as t(e, n)
      on conflict (order_id, position) do update set status = excluded.status, at = excluded.at
      returning 1
    )
    -- The stored version for a refused chain (the statement's snapshot: what the gate compared against).
    select i.id, (m.id is not null) as changed, case when m.id is null then o.version else i.version end as version,
           i.status, i.event_id, i.merchant_id
    from input i left join moved m on m.id = i.id left join replica.orders o on o.id = i.id`;
  const byId = new Map(sorted.map((c) => [c.orderId, c]));
  return rows.map((r) => {
    const chain = byId.get(r.id)!;
    return {
      id: r.id,
      changed: r.changed,
      previousVersion: chain.fromVersion,
      version: r.version,
      merchantId: r.merchant_id,
      status: r.changed ? r.status : null,
      previousStatus: chain.fromStatus,
      eventId: r.changed ? r.event_id : null,
      source: r.changed ? "event" : null,
    };
  });
}
