-- The whole mirror: brands with their descriptions, menus as rows, a job's publish results as rows, the
-- reporting views over them, `picked_up` final for pickup orders, and merchants learned from a webhook kept
-- apart until Loops confirms them.

alter table replica.brands
  add column description_en text,
  add column description_ar text;

-- A brand's menu as rows, replaced in one transaction with each newer version of replica.menus (the gate).
-- Keys are the partner's external_refs, unique within the brand; `menu_version` is the version they came with.
create table replica.menu_categories (
  brand_id       text not null,
  external_ref   text not null,
  merchant_id    text not null,
  menu_version   bigint not null,
  name_en        text,
  name_ar        text,
  description_en text,
  description_ar text,
  sort_order     integer not null default 0,
  primary key (brand_id, external_ref)
);

create table replica.menu_products (
  brand_id              text not null,
  external_ref          text not null,
  merchant_id           text not null,
  menu_version          bigint not null,
  category_external_ref text,
  name_en               text,
  name_ar               text,
  description_en        text,
  description_ar        text,
  image_url             text,
  -- Null when the product is sold by its variants.
  price_amount          bigint,
  currency              text,
  sku                   text,
  barcode               text,
  calories              integer,
  available             boolean not null default true,
  sort_order            integer not null default 0,
  primary key (brand_id, external_ref)
);
create index menu_products_sku_idx on replica.menu_products (brand_id, sku) where sku is not null;
create index menu_products_merchant_idx on replica.menu_products (merchant_id);

create table replica.menu_product_variants (
  brand_id             text not null,
  product_external_ref text not null,
  external_ref         text not null,
  merchant_id          text not null,
  menu_version         bigint not null,
  name_en              text,
  name_ar              text,
  price_amount         bigint not null,
  currency             text not null,
  sku                  text,
  barcode              text,
  calories             integer,
  available            boolean not null default true,
  -- Variants carry no sort_order upstream: their position in the product.
  sort_order           integer not null,
  primary key (brand_id, product_external_ref, external_ref)
);
create index menu_product_variants_sku_idx on replica.menu_product_variants (brand_id, sku) where sku is not null;

create table replica.menu_modifier_groups (
  brand_id       text not null,
  external_ref   text not null,
  merchant_id    text not null,
  menu_version   bigint not null,
  name_en        text,
  name_ar        text,
  min_selections integer not null,
  max_selections integer not null,
  -- Groups carry no sort_order upstream: their position in the menu.
  sort_order     integer not null,
  primary key (brand_id, external_ref)
);

create table replica.menu_modifier_options (
  brand_id           text not null,
  group_external_ref text not null,
  external_ref       text not null,
  merchant_id        text not null,
  menu_version       bigint not null,
  name_en            text,
  name_ar            text,
  price_amount       bigint not null,
  currency           text not null,
  calories           integer,
  available          boolean not null default true,
  sort_order         integer not null default 0,
  primary key (brand_id, group_external_ref, external_ref)
);

-- Which modifier groups a product shows, in the order it shows them.
create table replica.menu_product_modifier_groups (
  brand_id             text not null,
  product_external_ref text not null,
  group_external_ref   text not null,
  merchant_id          text not null,
  menu_version         bigint not null,
  sort_order           integer not null,
  primary key (brand_id, product_external_ref, group_external_ref)
);

-- A job's results, one row per location and delivery app (publish jobs), replaced with the job row.
create table replica.job_results (
  job_id                text not null references replica.jobs (id) on delete cascade,
  position              integer not null,
  merchant_id           text not null,
  brand_id              text,
  location_id           text not null,
  channel_connection_id text,
  channel               text not null,
  status                text not null,
  -- Problem items the delivery app sent: [{external_ref, field, code, message}].
  errors                jsonb not null default '[]',
  primary key (job_id, position)
);
create index job_results_location_idx on replica.job_results (location_id);

-- Pickup orders end at picked_up; delivery orders go on to delivered.
create or replace view reporting.orders as
with zones as materialized (
  select id, name_en, name_ar, reporting.zone_or_default(timezone) as timezone from replica.locations
)
select
  o.id                                                              as order_id,
  o.merchant_id,
  o.location_id,
  z.name_en                                                         as location_name_en,
  z.name_ar                                                         as location_name_ar,
  coalesce(z.timezone, 'Asia/Riyadh')                               as timezone,
  o.channel,
  o.channel_ref,
  o.type                                                            as order_type,
  o.status,
  o.status in ('delivered', 'rejected', 'cancelled')
    or (o.status = 'picked_up' and o.type = 'pickup')               as is_final,
  -- Rejected and cancelled orders are no sale; everything else (open ones included) is.
  o.status not in ('rejected', 'cancelled')                         as is_sale,
  (o.created_at at time zone coalesce(z.timezone, 'Asia/Riyadh'))::date as local_date,
  o.created_at at time zone coalesce(z.timezone, 'Asia/Riyadh')     as local_created_at,
  o.created_at,
  o.updated_at,
  o.version,
  o.currency,
  coalesce(o.subtotal_amount, 0)                                    as subtotal_amount,
  coalesce(o.discount_amount, 0)                                    as discount_amount,
  coalesce(o.delivery_fee_amount, 0)                                as delivery_fee_amount,
  coalesce(o.tax_amount, 0)                                         as tax_amount,
  coalesce(o.total_amount, 0)                                       as total_amount
from replica.orders o
left join zones z on z.id = o.location_id;

-- Each order item with the menu product it was sold as, in the menu of its location's brand: by sku (of the
-- product or one of its variants) first, else by English then Arabic name. Unmatched items keep null refs.
create view reporting.order_item_products as
select
  i.order_id,
  i.position,
  o.merchant_id,
  o.location_id,
  l.brand_id,
  i.sku,
  i.name_en,
  i.name_ar,
  i.quantity,
  i.unit_price_amount,
  i.currency,
  m.product_external_ref,
  m.variant_external_ref,
  m.matched_by
from replica.order_items i
join replica.orders o on o.id = i.order_id
left join replica.locations l on l.id = o.location_id
left join lateral (
  select c.product_external_ref, c.variant_external_ref, c.matched_by
  from (
    select p.external_ref as product_external_ref, null::text as variant_external_ref, 'sku' as matched_by, 1 as rank
    from replica.menu_products p where p.brand_id = l.brand_id and p.sku = i.sku
    union all
    select v.product_external_ref, v.external_ref, 'sku', 2
    from replica.menu_product_variants v where v.brand_id = l.brand_id and v.sku = i.sku
    union all
    select p.external_ref, null, 'name', 3
    from replica.menu_products p where p.brand_id = l.brand_id and p.name_en = i.name_en
    union all
    select p.external_ref, null, 'name', 4
    from replica.menu_products p where p.brand_id = l.brand_id and p.name_ar = i.name_ar
  ) c
  order by c.rank, c.product_external_ref
  limit 1
) m on true;

-- Sales per menu product (sales only: not rejected or cancelled), every product of every mirrored menu, so
-- products never sold are here with zero counts and null first/last sale.
create view reporting.menu_product_sales as
select
  p.merchant_id,
  p.brand_id,
  p.external_ref                                          as product_external_ref,
  p.category_external_ref,
  p.name_en,
  p.name_ar,
  p.sku,
  p.available,
  coalesce(p.currency, s.currency)                        as currency,
  coalesce(s.quantity_sold, 0)::bigint                    as quantity_sold,
  coalesce(s.revenue_amount, 0)::bigint                   as revenue_amount,
  coalesce(s.orders_count, 0)::bigint                     as orders_count,
  s.first_sold_at,
  s.last_sold_at
from replica.menu_products p
left join (
  select ip.brand_id, ip.product_external_ref, min(ip.currency) as currency,
         sum(ip.quantity) as quantity_sold, sum(ip.quantity * ip.unit_price_amount) as revenue_amount,
         count(distinct ip.order_id) as orders_count, min(r.created_at) as first_sold_at,
         max(r.created_at) as last_sold_at
  from reporting.order_item_products ip
  join reporting.orders r on r.order_id = ip.order_id
  where r.is_sale and ip.product_external_ref is not null
  group by ip.brand_id, ip.product_external_ref
) s on s.brand_id = p.brand_id and s.product_external_ref = p.external_ref;

-- Products of the current menus that no sale ever matched.
create view reporting.menu_products_never_sold as
select merchant_id, brand_id, product_external_ref, category_external_ref, name_en, name_ar, sku, available
from reporting.menu_product_sales
where orders_count = 0;

-- Publish results per location and delivery app, one row per problem the app reported (one row with null
-- problem fields when it reported none): "which location rejected my menu, and why".
create view reporting.menu_publish_results as
select
  r.job_id,
  j.merchant_id,
  coalesce(r.brand_id, j.brand_id)        as brand_id,
  j.status                                as job_status,
  j.created_at                            as job_created_at,
  j.completed_at                          as job_completed_at,
  r.location_id,
  l.name_en                               as location_name_en,
  r.channel_connection_id,
  r.channel,
  r.status,
  e ->> 'code'                            as error_code,
  e ->> 'message'                         as error_message,
  e ->> 'external_ref'                    as error_external_ref,
  e ->> 'field'                           as error_field
from replica.job_results r
join replica.jobs j on j.id = r.job_id
left join replica.locations l on l.id = r.location_id
left join lateral jsonb_array_elements(case jsonb_typeof(r.errors) when 'array' then r.errors else '[]' end) as e
  on true;

-- A merchant learned from a webhook is 'unconfirmed' until GET /connection answers for it; one Loops does not
-- know is 'unknown' (kept, so it is not asked again). Only 'active' merchants are caught up and reconciled.
alter table sync.merchants drop constraint merchants_status_check;
alter table sync.merchants add constraint merchants_status_check
  check (status in ('active', 'revoked', 'unconfirmed', 'unknown'));
alter table sync.merchants add column confirm_error text;

-- `loops-sync status` counts unhandled events by type; this keeps that count off the rest of the inbox.
create index events_unhandled_idx on sync.events (type, received_at) where outcome = 'unhandled';
