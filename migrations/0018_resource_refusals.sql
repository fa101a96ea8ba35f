-- Extra resources set aside: a scope refusal (403 insufficient_scope or scope_not_granted) on a call that is
-- not on the hot path (orders, events, locations, the connection, the token) holds only that resource family
-- (brands, menus, jobs, merchant, business_profile, channels), not every call: orders keep flowing. One row
-- per refused family, for the application (merchant_id null) or one merchant; a repeat updates it and doubles
-- the wait before the next attempt (1 h up to 24 h); a call for the family that succeeds deletes it. The
-- policy is classifyUpstreamFailure's; the writes live in packages/replica/src/resource-refusals.ts.
create table sync.resource_refusals (
  scope       text not null check (scope in ('application', 'merchant')),
  merchant_id text,
  resource    text not null,
  -- The refusal's code: 'insufficient_scope' (application) or 'scope_not_granted' (merchant).
  code        text not null,
  message     text,
  refusals    integer not null default 1,
  refused_at  timestamptz not null default now(),
  -- No call for the family before then (`loops-sync refresh` retries at once).
  retry_at    timestamptz not null,
  check ((scope = 'application') = (merchant_id is null)),
  unique nulls not distinct (scope, merchant_id, resource)
);
