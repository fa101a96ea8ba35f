-- The W3C traceparent (`00-<trace id>-<span id>-<flags>`) of the receiver's span that stored a webhook
-- event, while OpenTelemetry tracing is on; null otherwise (and for catch-up and CLI events). The worker's
-- spans for the event continue that trace, across the queue and a restart. Not a secret: ids only.
alter table sync.events
  add column trace_parent text
    check (trace_parent ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');
