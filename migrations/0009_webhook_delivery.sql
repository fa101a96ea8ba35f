-- Webhook delivery completeness: per merchant and hour, how the events stored that hour first arrived.
-- An event keeps the source of its first arrival (the inbox dedupes later ones), so events that came only
-- through catch-up are webhooks Loops never delivered; catch-up with no webhook at all for hours means the
-- endpoint is likely disabled in the partner portal (Loops disables it after 3 days of failures).
create view reporting.webhook_delivery as
select
  merchant_id,
  date_trunc('hour', received_at)                                      as hour,
  count(*)                                                             as events,
  count(*) filter (where source = 'webhook')                           as via_webhook,
  count(*) filter (where source = 'catchup')                           as via_catchup,
  round(100.0 * count(*) filter (where source = 'catchup') / count(*), 1) as catchup_percent
from sync.events
where source in ('webhook', 'catchup')
group by merchant_id, date_trunc('hour', received_at);

comment on view reporting.webhook_delivery is
  'Per merchant and hour: events first stored through a webhook or only through catch-up (GET /events).';
