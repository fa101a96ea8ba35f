-- Live worker processes (graphile-worker pools), so a survivor can release the jobs of one that died
-- (kill -9, lost machine) at once, instead of after graphile-worker's 4-hour lock timeout.
create table sync.worker_pools (
  -- graphile-worker's pool id: the value it writes into jobs.locked_by.
  id           text primary key,
  hostname     text not null,
  pid          integer not null,
  started_at   timestamptz not null default now(),
  heartbeat_at timestamptz not null default now()
);
create index worker_pools_heartbeat_idx on sync.worker_pools (heartbeat_at);
