// Generated from a migrated database by `npx -y pnpm@10 run schema:generate`; do not edit.
import type { ColumnType } from "kysely";

/** A column an insert may omit (it has a default). Unlike kysely's own, it keeps a ColumnType's select type. */
export type Generated<T> =
  T extends ColumnType<infer S, infer I, infer U>
    ? ColumnType<S, I | undefined, U>
    : ColumnType<T, T | undefined, T>;
/** A column Postgres always computes (identity always, generated stored): never written. */
export type GeneratedAlways<T> =
  T extends ColumnType<infer S, unknown, unknown> ? ColumnType<S, never, never> : ColumnType<T, never, never>;

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type Json = JsonValue;
/** numeric arrives as a string (exact); a number or a string may be written. */
export type Numeric = ColumnType<string, number | string, number | string>;
/** timestamptz and date arrive as a Date; a Date or an ISO string may be written. */
export type Timestamp = ColumnType<Date, Date | string, Date | string>;

/** Table replica.brands. */
export interface ReplicaBrands {
  id: string;
  merchant_id: string;
  external_ref: string | null;
  name_en: string | null;
  name_ar: string | null;
  logo_url: string | null;
  cover_image_url: string | null;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  raw: Json;
  synced_at: Generated<Timestamp>;
  description_en: string | null;
  description_ar: string | null;
}

/** Table replica.change_feed_state. */
export interface ReplicaChangeFeedState {
  singleton: Generated<boolean>;
  pruned_through: Generated<number>;
}

/** Table replica.changes. */
export interface ReplicaChanges {
  position: GeneratedAlways<number>;
  resource: string;
  resource_id: string;
  merchant_id: string | null;
  operation: string;
  version: number | null;
  previous_version: number | null;
  status: string | null;
  previous_status: string | null;
  source: string;
  event_id: string | null;
  changed_at: Generated<Timestamp>;
}

/** Table replica.channel_connections. */
export interface ReplicaChannelConnections {
  id: string;
  merchant_id: string;
  location_id: string;
  channel: string;
  status: string;
  updated_at: Timestamp | null;
  raw: Json;
  synced_at: Generated<Timestamp>;
}

/** Table replica.channels. */
export interface ReplicaChannels {
  id: string;
  raw: Json;
  synced_at: Generated<Timestamp>;
}

/** Table replica.connections. */
export interface ReplicaConnections {
  id: string;
  merchant_id: string;
  external_ref: string | null;
  status: string;
  scopes: Generated<string[]>;
  location_ids: Generated<string[]>;
  include_future_locations: boolean | null;
  created_at: Timestamp | null;
  raw: Json;
  synced_at: Generated<Timestamp>;
}

/** Table replica.job_results. */
export interface ReplicaJobResults {
  job_id: string;
  position: number;
  merchant_id: string;
  brand_id: string | null;
  location_id: string;
  channel_connection_id: string | null;
  channel: string;
  status: string;
  errors: Generated<Json>;
}

/** Table replica.jobs. */
export interface ReplicaJobs {
  id: string;
  merchant_id: string;
  type: string;
  brand_id: string | null;
  status: string;
  created_at: Timestamp | null;
  completed_at: Timestamp | null;
  raw: Json;
  synced_at: Generated<Timestamp>;
}

/** Table replica.locations. */
export interface ReplicaLocations {
  id: string;
  merchant_id: string;
  brand_id: string | null;
  name_en: string | null;
  name_ar: string | null;
  status: string;
  timezone: Generated<string>;
  city: string | null;
  country: string | null;
  latitude: number | null;
  longitude: number | null;
  updated_at: Timestamp | null;
  raw: Json;
  synced_at: Generated<Timestamp>;
}

/** Table replica.menu_categories. */
export interface ReplicaMenuCategories {
  brand_id: string;
  external_ref: string;
  merchant_id: string;
  menu_version: number;
  name_en: string | null;
  name_ar: string | null;
  description_en: string | null;
  description_ar: string | null;
  sort_order: Generated<number>;
}

/** Table replica.menu_modifier_groups. */
export interface ReplicaMenuModifierGroups {
  brand_id: string;
  external_ref: string;
  merchant_id: string;
  menu_version: number;
  name_en: string | null;
  name_ar: string | null;
  min_selections: number;
  max_selections: number;
  sort_order: number;
}

/** Table replica.menu_modifier_options. */
export interface ReplicaMenuModifierOptions {
  brand_id: string;
  group_external_ref: string;
  external_ref: string;
  merchant_id: string;
  menu_version: number;
  name_en: string | null;
  name_ar: string | null;
  price_amount: number;
  currency: string;
  calories: number | null;
  available: Generated<boolean>;
  sort_order: Generated<number>;
}

/** Table replica.menu_product_modifier_groups. */
export interface ReplicaMenuProductModifierGroups {
  brand_id: string;
  product_external_ref: string;
  group_external_ref: string;
  merchant_id: string;
  menu_version: number;
  sort_order: number;
}

/** Table replica.menu_product_variants. */
export interface ReplicaMenuProductVariants {
  brand_id: string;
  product_external_ref: string;
  external_ref: string;
  merchant_id: string;
  menu_version: number;
  name_en: string | null;
  name_ar: string | null;
  price_amount: number;
  currency: string;
  sku: string | null;
  barcode: string | null;
  calories: number | null;
  available: Generated<boolean>;
  sort_order: number;
}

/** Table replica.menu_products. */
export interface ReplicaMenuProducts {
  brand_id: string;
  external_ref: string;
  merchant_id: string;
  menu_version: number;
  category_external_ref: string | null;
  name_en: string | null;
  name_ar: string | null;
  description_en: string | null;
  description_ar: string | null;
  image_url: string | null;
  price_amount: number | null;
  currency: string | null;
  sku: string | null;
  barcode: string | null;
  calories: number | null;
  available: Generated<boolean>;
  sort_order: Generated<number>;
}

/** Table replica.menus. */
export interface ReplicaMenus {
  brand_id: string;
  merchant_id: string;
  version: number;
  updated_at: Timestamp | null;
  raw: Json;
  synced_at: Generated<Timestamp>;
}

/** Table replica.merchants. */
export interface ReplicaMerchants {
  id: string;
  external_ref: string | null;
  name_en: string | null;
  name_ar: string | null;
  status: string;
  business_profile_status: string | null;
  created_at: Timestamp | null;
  raw: Json;
  synced_at: Generated<Timestamp>;
}

/** Table replica.order_item_modifiers. */
export interface ReplicaOrderItemModifiers {
  order_id: string;
  item_position: number;
  position: number;
  name_en: string | null;
  name_ar: string | null;
  quantity: number;
  unit_price_amount: number;
  currency: string;
}

/** Table replica.order_items. */
export interface ReplicaOrderItems {
  order_id: string;
  position: number;
  name_en: string | null;
  name_ar: string | null;
  sku: string | null;
  quantity: number;
  unit_price_amount: number;
  currency: string;
  notes: string | null;
  modifiers: Generated<Json>;
}

/** Table replica.order_status_history. */
export interface ReplicaOrderStatusHistory {
  order_id: string;
  position: number;
  status: string;
  at: Timestamp;
}

/** Table replica.orders. */
export interface ReplicaOrders {
  id: string;
  merchant_id: string;
  location_id: string;
  channel: string;
  channel_connection_id: string | null;
  channel_ref: string | null;
  type: string | null;
  status: string;
  version: number;
  scheduled_for: Timestamp | null;
  currency: string | null;
  subtotal_amount: number | null;
  discount_amount: number | null;
  delivery_fee_amount: number | null;
  tax_amount: number | null;
  total_amount: number | null;
  payment_method: string | null;
  payment_paid: boolean | null;
  notes: string | null;
  extensions: Json | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  raw: Json;
  synced_at: Generated<Timestamp>;
  last_change_event_id: string | null;
  last_change_source: string | null;
  fetched_version: number | null;
  unconfirmed_since: Timestamp | null;
}

/** View reporting.daily_sales. */
export interface ReportingDailySales {
  merchant_id: string | null;
  location_id: string | null;
  location_name_en: string | null;
  location_name_ar: string | null;
  timezone: string | null;
  channel: string | null;
  local_date: Timestamp | null;
  currency: string | null;
  orders_count: number | null;
  sales_orders_count: number | null;
  rejected_orders_count: number | null;
  cancelled_orders_count: number | null;
  subtotal_amount: number | null;
  discount_amount: number | null;
  delivery_fee_amount: number | null;
  tax_amount: number | null;
  total_amount: number | null;
  average_total_amount: number | null;
}

/** View reporting.daily_stage_duration_percentiles. */
export interface ReportingDailyStageDurationPercentiles {
  merchant_id: string | null;
  location_id: string | null;
  channel: string | null;
  local_date: Timestamp | null;
  orders_count: number | null;
  placed_to_accepted_samples: number | null;
  placed_to_accepted_p50_seconds: Numeric | null;
  placed_to_accepted_p90_seconds: Numeric | null;
  placed_to_accepted_p99_seconds: Numeric | null;
  accepted_to_ready_samples: number | null;
  accepted_to_ready_p50_seconds: Numeric | null;
  accepted_to_ready_p90_seconds: Numeric | null;
  accepted_to_ready_p99_seconds: Numeric | null;
  ready_to_picked_up_samples: number | null;
  ready_to_picked_up_p50_seconds: Numeric | null;
  ready_to_picked_up_p90_seconds: Numeric | null;
  ready_to_picked_up_p99_seconds: Numeric | null;
}

/** View reporting.item_sales. */
export interface ReportingItemSales {
  merchant_id: string | null;
  location_id: string | null;
  local_date: Timestamp | null;
  sku: string | null;
  name_en: string | null;
  name_ar: string | null;
  currency: string | null;
  quantity_sold: number | null;
  revenue_amount: number | null;
  orders_count: number | null;
}

/** View reporting.menu_product_sales. */
export interface ReportingMenuProductSales {
  merchant_id: string | null;
  brand_id: string | null;
  product_external_ref: string | null;
  category_external_ref: string | null;
  name_en: string | null;
  name_ar: string | null;
  sku: string | null;
  available: boolean | null;
  currency: string | null;
  quantity_sold: number | null;
  revenue_amount: number | null;
  orders_count: number | null;
  first_sold_at: Timestamp | null;
  last_sold_at: Timestamp | null;
}

/** View reporting.menu_products_never_sold. */
export interface ReportingMenuProductsNeverSold {
  merchant_id: string | null;
  brand_id: string | null;
  product_external_ref: string | null;
  category_external_ref: string | null;
  name_en: string | null;
  name_ar: string | null;
  sku: string | null;
  available: boolean | null;
}

/** View reporting.menu_publish_results. */
export interface ReportingMenuPublishResults {
  job_id: string | null;
  merchant_id: string | null;
  brand_id: string | null;
  job_status: string | null;
  job_created_at: Timestamp | null;
  job_completed_at: Timestamp | null;
  location_id: string | null;
  location_name_en: string | null;
  channel_connection_id: string | null;
  channel: string | null;
  status: string | null;
  error_code: string | null;
  error_message: string | null;
  error_external_ref: string | null;
  error_field: string | null;
}

/** View reporting.modifier_sales. */
export interface ReportingModifierSales {
  merchant_id: string | null;
  location_id: string | null;
  local_date: Timestamp | null;
  name_en: string | null;
  name_ar: string | null;
  currency: string | null;
  quantity_sold: number | null;
  revenue_amount: number | null;
  orders_count: number | null;
}

/** View reporting.order_item_products. */
export interface ReportingOrderItemProducts {
  order_id: string | null;
  position: number | null;
  merchant_id: string | null;
  location_id: string | null;
  brand_id: string | null;
  sku: string | null;
  name_en: string | null;
  name_ar: string | null;
  quantity: number | null;
  unit_price_amount: number | null;
  currency: string | null;
  product_external_ref: string | null;
  variant_external_ref: string | null;
  matched_by: string | null;
}

/** View reporting.order_outcomes. */
export interface ReportingOrderOutcomes {
  merchant_id: string | null;
  location_id: string | null;
  channel: string | null;
  local_date: Timestamp | null;
  orders_count: number | null;
  delivered_count: number | null;
  rejected_count: number | null;
  cancelled_count: number | null;
  picked_up_count: number | null;
  in_progress_count: number | null;
  delivered_rate: Numeric | null;
  rejected_rate: Numeric | null;
  cancelled_rate: Numeric | null;
}

/** View reporting.orders. */
export interface ReportingOrders {
  order_id: string | null;
  merchant_id: string | null;
  location_id: string | null;
  location_name_en: string | null;
  location_name_ar: string | null;
  timezone: string | null;
  channel: string | null;
  channel_ref: string | null;
  order_type: string | null;
  status: string | null;
  is_final: boolean | null;
  is_sale: boolean | null;
  local_date: Timestamp | null;
  local_created_at: Timestamp | null;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  version: number | null;
  currency: string | null;
  subtotal_amount: number | null;
  discount_amount: number | null;
  delivery_fee_amount: number | null;
  tax_amount: number | null;
  total_amount: number | null;
  unconfirmed: boolean | null;
  fetched_version: number | null;
}

/** View reporting.stage_duration_percentiles. */
export interface ReportingStageDurationPercentiles {
  merchant_id: string | null;
  location_id: string | null;
  channel: string | null;
  orders_count: number | null;
  placed_to_accepted_samples: number | null;
  placed_to_accepted_p50_seconds: Numeric | null;
  placed_to_accepted_p90_seconds: Numeric | null;
  placed_to_accepted_p99_seconds: Numeric | null;
  accepted_to_ready_samples: number | null;
  accepted_to_ready_p50_seconds: Numeric | null;
  accepted_to_ready_p90_seconds: Numeric | null;
  accepted_to_ready_p99_seconds: Numeric | null;
  ready_to_picked_up_samples: number | null;
  ready_to_picked_up_p50_seconds: Numeric | null;
  ready_to_picked_up_p90_seconds: Numeric | null;
  ready_to_picked_up_p99_seconds: Numeric | null;
}

/** View reporting.stage_durations. */
export interface ReportingStageDurations {
  order_id: string | null;
  merchant_id: string | null;
  location_id: string | null;
  channel: string | null;
  local_date: Timestamp | null;
  status: string | null;
  placed_at: Timestamp | null;
  accepted_at: Timestamp | null;
  ready_at: Timestamp | null;
  picked_up_at: Timestamp | null;
  placed_to_accepted_seconds: Numeric | null;
  accepted_to_ready_seconds: Numeric | null;
  ready_to_picked_up_seconds: Numeric | null;
}

/** View reporting.sync_health. */
export interface ReportingSyncHealth {
  merchant_id: string | null;
  merchant_status: string | null;
  revoked_at: Timestamp | null;
  paused_until: Timestamp | null;
  cursor_event_id: string | null;
  cursor_created_at: Timestamp | null;
  last_catchup_started_at: Timestamp | null;
  last_catchup_finished_at: Timestamp | null;
  last_catchup_status: string | null;
  last_webhook_received_at: Timestamp | null;
  last_applied_event_created_at: Timestamp | null;
  last_applied_at: Timestamp | null;
  applied_lag_seconds: Numeric | null;
  pending_events: number | null;
  oldest_pending_received_at: Timestamp | null;
  oldest_pending_age_seconds: Numeric | null;
  failed_events: number | null;
  connection_id: string | null;
  connection_status: string | null;
}

/** View reporting.top_items. */
export interface ReportingTopItems {
  merchant_id: string | null;
  sku: string | null;
  name_en: string | null;
  name_ar: string | null;
  currency: string | null;
  quantity_sold: number | null;
  revenue_amount: number | null;
  orders_count: number | null;
  quantity_rank: number | null;
  revenue_rank: number | null;
}

/** View reporting.top_modifiers. */
export interface ReportingTopModifiers {
  merchant_id: string | null;
  name_en: string | null;
  name_ar: string | null;
  currency: string | null;
  quantity_sold: number | null;
  revenue_amount: number | null;
  orders_count: number | null;
  quantity_rank: number | null;
  revenue_rank: number | null;
}

/** View reporting.webhook_delivery. */
export interface ReportingWebhookDelivery {
  merchant_id: string | null;
  hour: Timestamp | null;
  events: number | null;
  via_webhook: number | null;
  via_catchup: number | null;
  catchup_percent: Numeric | null;
}

/** Table sync.backfills. */
export interface SyncBackfills {
  merchant_id: string;
  watermark: Timestamp | null;
  last_completed_at: Timestamp | null;
  run_started_at: Timestamp | null;
  run_since: Timestamp | null;
  run_next_watermark: Timestamp | null;
  run_page_cursor: string | null;
  run_pages: Generated<number>;
  run_orders_seen: Generated<number>;
  run_orders_changed: Generated<number>;
  last_run_status: string | null;
  last_run_error: string | null;
  updated_at: Generated<Timestamp>;
}

/** Table sync.cursors. */
export interface SyncCursors {
  merchant_id: string;
  after_event_id: string | null;
  after_created_at: Timestamp | null;
  events_stored: Generated<number>;
  last_run_started_at: Timestamp | null;
  last_run_finished_at: Timestamp | null;
  last_run_status: string | null;
  last_run_error: string | null;
  updated_at: Generated<Timestamp>;
}

/** Table sync.events. */
export interface SyncEvents {
  id: string;
  type: string;
  merchant_id: string;
  location_id: string | null;
  connection_id: string | null;
  origin_type: string | null;
  origin_application_id: string | null;
  created_at: Timestamp;
  received_at: Generated<Timestamp>;
  source: string;
  payload: Json;
  outcome: Generated<string>;
  outcome_at: Timestamp | null;
  error: string | null;
  order_version: GeneratedAlways<number | null>;
  trace_parent: string | null;
  order_id: GeneratedAlways<string | null>;
}

/** Table sync.feed_consumer_leases. */
export interface SyncFeedConsumerLeases {
  consumer_name: string;
  position: number;
  leased_until: Timestamp | null;
  deliveries: Generated<number>;
  acked_at: Timestamp | null;
}

/** Table sync.feed_consumers. */
export interface SyncFeedConsumers {
  name: string;
  resources: string[] | null;
  merchant_ids: string[] | null;
  acked_through: number;
  created_at: Generated<Timestamp>;
  last_receive_at: Timestamp | null;
}

/** Table sync.forward_deliveries. */
export interface SyncForwardDeliveries {
  position: number;
  resource: string;
  resource_id: string;
  changed_at: Timestamp;
  age_from: Timestamp;
  attempts: Generated<number>;
  next_attempt_at: Generated<Timestamp>;
  leased_until: Timestamp | null;
  leased_by: string | null;
  last_error: string | null;
  dead_at: Timestamp | null;
}

/** Table sync.forward_progress. */
export interface SyncForwardProgress {
  singleton: Generated<boolean>;
  scanned_through: number;
  endpoint: string | null;
  started_at: Generated<Timestamp>;
  last_success_at: Timestamp | null;
  last_failure_at: Timestamp | null;
  last_failure: string | null;
  held_until: Timestamp | null;
  seen_at: Timestamp | null;
}

/** Table sync.forward_rate. */
export interface SyncForwardRate {
  singleton: Generated<boolean>;
  slot: Generated<number>;
  used: Generated<number[]>;
  started_ms: number[] | null;
}

/** Table sync.merchants. */
export interface SyncMerchants {
  id: string;
  status: Generated<string>;
  revoked_at: Timestamp | null;
  paused_until: Timestamp | null;
  learned_from: Generated<string>;
  first_seen_at: Generated<Timestamp>;
  confirm_error: string | null;
  connection_id: string | null;
  locations_listed_at: Timestamp | null;
  reconciled_at: Timestamp | null;
  reconcile_calls: number | null;
}

/** Table sync.migration_steps. */
export interface SyncMigrationSteps {
  migration_id: number;
  step: number;
  description: string;
  checksum: string;
  tries: number;
  batches: number | null;
  rows: number | null;
  applied_at: Generated<Timestamp>;
}

/** Table sync.migrations. */
export interface SyncMigrations {
  id: number;
  name: string;
  checksum: string;
  applied_at: Generated<Timestamp>;
}

/** Table sync.order_refresh. */
export interface SyncOrderRefresh {
  id: GeneratedAlways<number>;
  merchant_id: string;
  order_id: string;
  version: number | null;
  queued_at: Generated<Timestamp>;
  event_id: string | null;
  not_before: Timestamp | null;
}

/** Table sync.refused_events. */
export interface SyncRefusedEvents {
  id: string;
  merchant_id: string;
  type: string | null;
  created_at: Timestamp | null;
  source: string;
  reason: string;
  refused_at: Generated<Timestamp>;
}

/** Table sync.request_budget. */
export interface SyncRequestBudget {
  name: Generated<string>;
  slot: Generated<number>;
  used: Generated<number[]>;
  narrowed_rps: number | null;
  narrowed_at: Timestamp | null;
  narrowed_until: Timestamp | null;
}

/** Table sync.resource_refusals. */
export interface SyncResourceRefusals {
  scope: string;
  merchant_id: string | null;
  resource: string;
  code: string;
  message: string | null;
  refusals: Generated<number>;
  refused_at: Generated<Timestamp>;
  retry_at: Timestamp;
}

/** Table sync.role_grants. */
export interface SyncRoleGrants {
  role_oid: number;
  role_name: string;
  rights: string;
  granted_at: Generated<Timestamp>;
}

/** Table sync.scheduled_ticks. */
export interface SyncScheduledTicks {
  task: string;
  started_at: Timestamp;
  deadline: Timestamp | null;
  finished_at: Timestamp | null;
  items: Generated<number>;
  items_done: Generated<number>;
  last_duration_seconds: number | null;
  last_overran: Generated<boolean>;
  overruns: Generated<number>;
  interval_seconds: number | null;
  effective_interval_seconds: number | null;
}

/** Table sync.upstream_pauses. */
export interface SyncUpstreamPauses {
  scope: string;
  cause: string;
  detail: string | null;
  merchant_id: string;
  paused_at: Generated<Timestamp>;
  probe_at: Timestamp;
  probes: Generated<number>;
  probing_until: Timestamp | null;
  route: string | null;
}

/** Table sync.worker_pools. */
export interface SyncWorkerPools {
  id: string;
  hostname: string;
  pid: number;
  started_at: Generated<Timestamp>;
  heartbeat_at: Generated<Timestamp>;
}

export interface Database {
  "replica.brands": ReplicaBrands;
  "replica.change_feed_state": ReplicaChangeFeedState;
  "replica.changes": ReplicaChanges;
  "replica.channel_connections": ReplicaChannelConnections;
  "replica.channels": ReplicaChannels;
  "replica.connections": ReplicaConnections;
  "replica.job_results": ReplicaJobResults;
  "replica.jobs": ReplicaJobs;
  "replica.locations": ReplicaLocations;
  "replica.menu_categories": ReplicaMenuCategories;
  "replica.menu_modifier_groups": ReplicaMenuModifierGroups;
  "replica.menu_modifier_options": ReplicaMenuModifierOptions;
  "replica.menu_product_modifier_groups": ReplicaMenuProductModifierGroups;
  "replica.menu_product_variants": ReplicaMenuProductVariants;
  "replica.menu_products": ReplicaMenuProducts;
  "replica.menus": ReplicaMenus;
  "replica.merchants": ReplicaMerchants;
  "replica.order_item_modifiers": ReplicaOrderItemModifiers;
  "replica.order_items": ReplicaOrderItems;
  "replica.order_status_history": ReplicaOrderStatusHistory;
  "replica.orders": ReplicaOrders;
  "reporting.daily_sales": ReportingDailySales;
  "reporting.daily_stage_duration_percentiles": ReportingDailyStageDurationPercentiles;
  "reporting.item_sales": ReportingItemSales;
  "reporting.menu_product_sales": ReportingMenuProductSales;
  "reporting.menu_products_never_sold": ReportingMenuProductsNeverSold;
  "reporting.menu_publish_results": ReportingMenuPublishResults;
  "reporting.modifier_sales": ReportingModifierSales;
  "reporting.order_item_products": ReportingOrderItemProducts;
  "reporting.order_outcomes": ReportingOrderOutcomes;
  "reporting.orders": ReportingOrders;
  "reporting.stage_duration_percentiles": ReportingStageDurationPercentiles;
  "reporting.stage_durations": ReportingStageDurations;
  "reporting.sync_health": ReportingSyncHealth;
  "reporting.top_items": ReportingTopItems;
  "reporting.top_modifiers": ReportingTopModifiers;
  "reporting.webhook_delivery": ReportingWebhookDelivery;
  "sync.backfills": SyncBackfills;
  "sync.cursors": SyncCursors;
  "sync.events": SyncEvents;
  "sync.feed_consumer_leases": SyncFeedConsumerLeases;
  "sync.feed_consumers": SyncFeedConsumers;
  "sync.forward_deliveries": SyncForwardDeliveries;
  "sync.forward_progress": SyncForwardProgress;
  "sync.forward_rate": SyncForwardRate;
  "sync.merchants": SyncMerchants;
  "sync.migration_steps": SyncMigrationSteps;
  "sync.migrations": SyncMigrations;
  "sync.order_refresh": SyncOrderRefresh;
  "sync.refused_events": SyncRefusedEvents;
  "sync.request_budget": SyncRequestBudget;
  "sync.resource_refusals": SyncResourceRefusals;
  "sync.role_grants": SyncRoleGrants;
  "sync.scheduled_ticks": SyncScheduledTicks;
  "sync.upstream_pauses": SyncUpstreamPauses;
  "sync.worker_pools": SyncWorkerPools;
}
