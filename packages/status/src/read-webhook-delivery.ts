import type { Sql, TransactionSql } from "@loops-sync/db";

/** How events first arrived: through a webhook, or only through catch-up (a webhook Loops never delivered). */
export interface WebhookDelivery {
  /** Events first stored in the last hour, every merchant. */
  lastHour: { webhook: number; catchup: number };
  /**
   * True when the last hour's events all arrived through catch-up: Loops may have disabled the webhook
   * endpoint (the spec disables it after 3 days of failures); re-enable it in the partner portal.
   */
  catchupOnly: boolean;
  /** Per merchant, the last 24 hours of reporting.webhook_delivery, most catch-up first. */
  merchants: Array<{ merchantId: string; viaWebhook: number; viaCatchup: number; catchupPercent: number }>;
}

/** Webhook delivery completeness for the operator page, from reporting.webhook_delivery and the inbox. */
export async function readWebhookDelivery(sql: Sql | TransactionSql): Promise<WebhookDelivery> {
  const [hour] = await sql<{ webhook: number; catchup: number }[]>`
    select count(*) filter (where source = 'webhook')::int as webhook,
           count(*) filter (where source = 'catchup')::int as catchup
    from sync.events where received_at > now() - interval '1 hour'`;
  const merchants = await sql<{ merchant_id: string; via_webhook: number; via_catchup: number }[]>`
    select merchant_id, sum(via_webhook)::int as via_webhook, sum(via_catchup)::int as via_catchup
    from reporting.webhook_delivery
    where hour > now() - interval '24 hours'
    group by merchant_id
    order by sum(via_catchup) desc, merchant_id`;
  return {
    lastHour: { webhook: hour!.webhook, catchup: hour!.catchup },
    catchupOnly: hour!.catchup > 0 && hour!.webhook === 0,
    merchants: merchants.map((m) => ({
      merchantId: m.merchant_id,
      viaWebhook: m.via_webhook,
      viaCatchup: m.via_catchup,
      catchupPercent: Math.round((1000 * m.via_catchup) / Math.max(1, m.via_webhook + m.via_catchup)) / 10,
    })),
  };
}
