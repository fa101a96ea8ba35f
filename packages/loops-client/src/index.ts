export { type Backoff, backoffMs } from "./backoff.ts";
export type { CallOptions, IdempotentCallOptions } from "./call-options.ts";
export { type Coalescing, coalescing, type RoundEnd } from "./coalescing.ts";
export {
  isLoopsError,
  kindOfStatus,
  type LoopsApiErrorInit,
  LoopsError,
  type LoopsErrorCode,
  type LoopsErrorInit,
  type LoopsErrorKind,
  type LoopsFieldError,
} from "./errors.ts";
export { ANSWER_HEADERS, type ForwardRequest, type ForwardResult } from "./forward-call.ts";
export {
  createGatewayClient,
  type GatewayClient,
  type GatewayClientOptions,
  type GatewayMerchantClient,
} from "./gateway-client.ts";
export type { HttpFetch, HttpRequestInit, HttpResponse } from "./http.ts";
export { LoopsClient, type LoopsClientOptions, type MerchantClientOptions } from "./loops-client.ts";
export { MerchantClient } from "./merchant-client.ts";
export type {
  BudgetGrant,
  GateTicket,
  RequestGate,
  RequestPriority,
  TakeTokens,
} from "./request-gate.ts";
export type { ClientStatsSnapshot, RequestInfo } from "./request-stats.ts";
export type { BrandsResource } from "./resources/brands.ts";
export type { BusinessProfileResource } from "./resources/business-profile.ts";
export type { ChannelsResource } from "./resources/channels.ts";
export type { ConnectionResource } from "./resources/connection.ts";
export type { EventsResource } from "./resources/events.ts";
export type { JobsResource } from "./resources/jobs.ts";
export type { LocationsResource } from "./resources/locations.ts";
export type { MenusResource } from "./resources/menus.ts";
export type { MerchantProfileResource, MerchantsResource } from "./resources/merchant.ts";
export type { OrderPage, OrdersResource, RejectedOrder } from "./resources/orders.ts";
export type { SandboxOrderParams, SandboxResource } from "./resources/sandbox.ts";
export type { RetryOptions } from "./retry-policy.ts";
export type {
  BusinessDocument,
  BusinessProfile,
  DocumentType,
  NationalAddress,
} from "./schemas/business-profile.ts";
export { DOCUMENT_TYPES } from "./schemas/business-profile.ts";
export type { LocalizedText, Money, Page, ProblemItem } from "./schemas/common.ts";
export { type Event, type EventOrigin, EventSchema, type EventsPage } from "./schemas/event.ts";
export type { Job, JobResult } from "./schemas/job.ts";
export type {
  Channel,
  ChannelConnection,
  Location,
  LocationAddress,
  OpeningHours,
  OpeningHoursRange,
  Weekday,
} from "./schemas/location.ts";
export type { Menu, MenuCategory, ModifierGroup, ModifierOption, Product, Variant } from "./schemas/menu.ts";
export type { Brand, Connection, Merchant, MerchantOwner } from "./schemas/merchant.ts";
export {
  ORDER_STATUSES,
  type Order,
  type OrderItem,
  type OrderModifier,
  type OrderRefusal,
  OrderSchema,
  type OrderStatus,
  type OrderStatusChange,
  type OrderTotals,
  parseOrder,
} from "./schemas/order.ts";
export { SharedBudgetGate, type SharedBudgetGateOptions } from "./shared-budget-gate.ts";
export type { SyncApi, SyncMerchantApi } from "./sync-api.ts";
export type { LoopsClientLogger } from "./transport.ts";
export type {
  BusinessProfileDetailsParams,
  DocumentUploadParams,
} from "./validation/business-profile-input.ts";
export { MAX_DOCUMENT_BYTES } from "./validation/business-profile-input.ts";
export { formatIssuePath } from "./validation/format-issue-path.ts";
export type { LocationCreateParams, LocationUpdateParams } from "./validation/location-input.ts";
export { MAX_MENU_BYTES, type MenuImportParams, type MenuPublishParams } from "./validation/menu-input.ts";
export type {
  BrandCreateParams,
  BrandUpdateParams,
  MerchantCreateParams,
  MerchantUpdateParams,
} from "./validation/merchant-input.ts";
export type { EventsListParams, OrdersListParams, PageParams } from "./validation/query-input.ts";
