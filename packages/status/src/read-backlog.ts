import type { Sql, TransactionSql } from "@loops-sync/db";

/** One merchant's backlog; every age in seconds, null when there is nothing to measure. */
export interface MerchantBacklog {
  merchantId: string;
  ordersWaiting: number;
  oldestOrderWaitSeconds: number | null;
  pendingEvents: number;
  failedEvents: number;
  secondsSinceLastWebhook: number | null;
  catchupCursorAgeSeconds: number | null;
  /** Events first stored in the last hour, by how they arrived. */
  lastHour: { webhook: number; catchup: number };
}

interface BacklogRow {
  merchant_id: string;
  orders_waiting: number;
  oldest_order_wait: number | null;
  pending_events: number;
  failed_events: number;
  since_last_webhook: number | null;
  cursor_age: number | null;
  webhook_last_hour: number;
  catchup_last_hour: number;
}

/**
 * The backlog of every active merchant, for the gauges scraped from /metrics. Each per-merchant figure is an
 * index probe (the inbox's (merchant_id, source, received_at) index, the open-events partial index, the
 * refresh queue's lane index), so a scrape costs the same whatever the inbox's size.
 */
export async function readBacklog(sql: Sql | TransactionSql): Promise<MerchantBacklog[]> {
  const rows = await sql<BacklogRow[]>`
    with open_events as (
      select merchant_id,
             count(*) filter (where outcome = 'pending')::int as pending,
             count(*) filter (where outcome = 'failed')::int as failed
      from sync.events where outcome in ('pending', 'failed')
      group by merchant_id
    ), waiting as (
      select merchant_id, count(*)::int as n, extract(epoch from now() - min(queued_at))::float8 as oldest
      from sync.order_refresh group by merchant_id
    )
    select m.id as merchant_id,
           coalesce(w.n, 0) as orders_waiting,
           w.oldest as oldest_order_wait,
           coalesce(o.pending, 0) as pending_events,
           coalesce(o.failed, 0) as failed_events,
           extract(epoch from now() - (
             select max(e.received_at) from sync.events e where e.merchant_id = m.id and e.source = 'webhook'
           ))::float8 as since_last_webhook,
           extract(epoch from now() - coalesce(
             case when c.last_run_status in ('ok', 'cursor_expired') then c.last_run_finished_at
                  else c.last_run_started_at end,
             m.first_seen_at))::float8 as cursor_age,
           (select count(*) from sync.events e where e.merchant_id = m.id and e.source = 'webhook'
              and e.received_at > now() - interval '1 hour')::int as webhook_last_hour,
           (select count(*) from sync.events e where e.merchant_id = m.id and e.source = 'catchup'
              and e.received_at > now() - interval '1 hour')::int as catchup_last_hour
    from sync.merchants m
    left join sync.cursors c on c.merchant_id = m.id
    left join open_events o on o.merchant_id = m.id
    left join waiting w on w.merchant_id = m.id
    where m.status = 'active'
    order by m.id`;
  return rows.map((r) => ({
    merchantId: r.merchant_id,
    ordersWaiting: r.orders_waiting,
    oldestOrderWaitSeconds: r.oldest_order_wait,
    pendingEvents: r.pending_events,
    failedEvents: r.failed_events,
    secondsSinceLastWebhook: r.since_last_webhook,
    catchupCursorAgeSeconds: r.cursor_age,
    lastHour: { webhook: r.webhook_last_hour, catchup: r.catchup_last_hour },
  }));
}
