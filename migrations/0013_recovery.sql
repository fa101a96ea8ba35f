-- Pauses, not failures: a refusal that is not about the event (Loops refusing the application, or one
-- merchant's missing grant) holds every call of its scope instead of failing events. One row per paused
-- scope: 'application' or 'merchant:<id>'. Held here so every process sees it; the transitions live in
-- packages/replica/src/upstream-pause.ts.
create table sync.upstream_pauses (
  scope         text primary key check (scope = 'application' or scope like 'merchant:%'),
  -- The refusal's code: 'unauthorized', 'insufficient_scope', 'application_suspended', 'scope_not_granted'.
  cause         text not null,
  detail        text,
  -- The merchant whose call was refused; the probe calls for it.
  merchant_id   text not null,
  paused_at     timestamptz not null default now(),
  -- The next probe is due then; each failed probe doubles the wait (30 s up to 15 min by default).
  probe_at      timestamptz not null,
  probes        integer not null default 0,
  -- A process probing now holds the row until then (one probe at a time across processes).
  probing_until timestamptz
);

-- Until when calls for `merchant` wait: a 429's Retry-After, or a pause of the application or the merchant
-- (until its probe clears it; never in the past while the pause lasts). Null: call now.
create function sync.paused_until(merchant text) returns timestamptz
language sql stable as $$
  select greatest(
    (select m.paused_until from sync.merchants m where m.id = merchant and m.paused_until > now()),
    (select greatest(max(p.probe_at), now() + interval '1 second')
       from sync.upstream_pauses p
      where p.scope in ('application', 'merchant:' || merchant)
     having count(*) > 0)
  )
$$;

-- Events Postgres can never store (e.g. JSON holding \u0000, which jsonb refuses), as catch-up met them:
-- recorded so the cursor can move past them, and counted by `loops-sync status`. The receiver answers such
-- an event with 422 unstorable_event and the sender keeps it.
create table sync.refused_events (
  id          text primary key,
  merchant_id text not null,
  type        text,
  created_at  timestamptz,
  source      text not null check (source in ('webhook', 'catchup', 'cli')),
  -- Why: the SQLSTATE and Postgres's message.
  reason      text not null,
  refused_at  timestamptz not null default now()
);
create index refused_events_merchant_idx on sync.refused_events (merchant_id, refused_at);
