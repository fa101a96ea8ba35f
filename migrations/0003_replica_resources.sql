-- The other mirrored resources. Each keeps typed columns for querying and `raw`, the upstream JSON as received.

create table replica.merchants (
  id                      text primary key,
  external_ref            text,
  name_en                 text,
  name_ar                 text,
  status                  text not null,
  business_profile_status text,
  created_at              timestamptz,
  raw                     jsonb not null,
  synced_at               timestamptz not null default now()
);

create table replica.connections (
  id                       text primary key,
  merchant_id              text not null,
  external_ref             text,
  status                   text not null,
  scopes                   text[] not null default '{}',
  location_ids             text[] not null default '{}',
  include_future_locations boolean,
  created_at               timestamptz,
  raw                      jsonb not null,
  synced_at                timestamptz not null default now()
);
create index connections_merchant_idx on replica.connections (merchant_id);

create table replica.brands (
  id              text primary key,
  merchant_id     text not null,
  external_ref    text,
  name_en         text,
  name_ar         text,
  logo_url        text,
  cover_image_url text,
  created_at      timestamptz,
  updated_at      timestamptz,
  raw             jsonb not null,
  synced_at       timestamptz not null default now()
);
create index brands_merchant_idx on replica.brands (merchant_id);

create table replica.locations (
  id          text primary key,
  merchant_id text not null,
  brand_id    text,
  name_en     text,
  name_ar     text,
  status      text not null,
  -- IANA zone; reporting groups sales by the local calendar day in it.
  timezone    text not null default 'Asia/Riyadh',
  city        text,
  country     text,
  latitude    double precision,
  longitude   double precision,
  updated_at  timestamptz,
  raw         jsonb not null,
  synced_at   timestamptz not null default now()
);
create index locations_merchant_idx on replica.locations (merchant_id);

create table replica.channel_connections (
  id          text primary key,
  merchant_id text not null,
  location_id text not null,
  channel     text not null,
  status      text not null,
  updated_at  timestamptz,
  raw         jsonb not null,
  synced_at   timestamptz not null default now()
);
create index channel_connections_location_idx on replica.channel_connections (location_id);

create table replica.channels (
  id        text primary key,
  raw       jsonb not null,
  synced_at timestamptz not null default now()
);

create table replica.menus (
  brand_id    text primary key,
  merchant_id text not null,
  version     bigint not null,
  updated_at  timestamptz,
  raw         jsonb not null,
  synced_at   timestamptz not null default now()
);

create table replica.jobs (
  id           text primary key,
  merchant_id  text not null,
  type         text not null,
  brand_id     text,
  status       text not null,
  created_at   timestamptz,
  completed_at timestamptz,
  raw          jsonb not null,
  synced_at    timestamptz not null default now()
);
create index jobs_merchant_idx on replica.jobs (merchant_id);
