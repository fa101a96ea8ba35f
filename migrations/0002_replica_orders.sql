-- The mirrored orders. Money is in minor units (halalas for SAR) beside its currency.
create schema if not exists replica;

create table replica.orders (
  id                    text primary key,
  merchant_id           text not null,
  location_id           text not null,
  channel               text not null,
  channel_connection_id text,
  channel_ref           text,
  type                  text,
  status                text not null,
  version               bigint not null,
  scheduled_for         timestamptz,
  currency              text,
  subtotal_amount       bigint,
  discount_amount       bigint,
  delivery_fee_amount   bigint,
  tax_amount            bigint,
  total_amount          bigint,
  payment_method        text,
  payment_paid          boolean,
  notes                 text,
  extensions            jsonb,
  created_at            timestamptz not null,
  updated_at            timestamptz not null,
  -- The order exactly as the upstream returned it.
  raw                   jsonb not null,
  synced_at             timestamptz not null default now()
);

create index orders_merchant_updated_idx on replica.orders (merchant_id, updated_at desc);
create index orders_location_created_idx on replica.orders (location_id, created_at);
create index orders_status_idx on replica.orders (merchant_id, status);

create table replica.order_items (
  order_id          text not null references replica.orders (id) on delete cascade,
  position          integer not null,
  name_en           text,
  name_ar           text,
  sku               text,
  quantity          integer not null,
  unit_price_amount bigint not null,
  currency          text not null,
  notes             text,
  modifiers         jsonb not null default '[]',
  primary key (order_id, position)
);

create table replica.order_item_modifiers (
  order_id          text not null references replica.orders (id) on delete cascade,
  item_position     integer not null,
  position          integer not null,
  name_en           text,
  name_ar           text,
  quantity          integer not null,
  unit_price_amount bigint not null,
  currency          text not null,
  primary key (order_id, item_position, position)
);

create table replica.order_status_history (
  order_id text not null references replica.orders (id) on delete cascade,
  position integer not null,
  status   text not null,
  at       timestamptz not null,
  primary key (order_id, position)
);

create index order_status_history_status_idx on replica.order_status_history (status, at);
