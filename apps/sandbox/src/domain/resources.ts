/** The resource shapes of the Partner API spec, as the sandbox stores and serves them. */

export interface LocalizedText {
  en: string | null;
  ar: string | null;
}

export interface Money {
  amount: number;
  currency: string;
}

export const ORDER_STATUSES = [
  "placed",
  "accepted",
  "preparing",
  "ready",
  "picked_up",
  "delivered",
  "rejected",
  "cancelled",
] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const ORDER_TYPES = ["delivery", "pickup", "dine_in"] as const;
export type OrderType = (typeof ORDER_TYPES)[number];

export interface OrderModifier {
  name: LocalizedText;
  quantity: number;
  unit_price: Money;
}

export interface OrderItem {
  name: LocalizedText;
  sku: string | null;
  quantity: number;
  unit_price: Money;
  modifiers: OrderModifier[];
  notes: string | null;
}

export interface Order {
  id: string;
  version: number;
  merchant_id: string;
  location_id: string;
  channel: string;
  channel_connection_id: string;
  channel_ref: string;
  type: OrderType;
  status: OrderStatus;
  status_history: { status: OrderStatus; at: string }[];
  scheduled_for: string | null;
  items: OrderItem[];
  totals: { subtotal: Money; discount: Money; delivery_fee: Money; tax: Money; total: Money };
  payment: { method: "online" | "cash" | "card_on_delivery"; paid: boolean };
  notes: string | null;
  created_at: string;
  updated_at: string;
  extensions: Record<string, unknown>;
}

export type OriginType = "channel" | "api" | "web_app" | "system";

export interface Origin {
  type: OriginType;
  application_id: string | null;
}

export interface SandboxEvent {
  id: string;
  type: string;
  created_at: string;
  merchant_id: string;
  location_id: string | null;
  connection_id: string;
  origin: Origin;
  data: Record<string, unknown>;
}

export interface Connection {
  id: string;
  application_id: string;
  merchant_id: string;
  external_ref: string | null;
  status: "active" | "revoked";
  scopes: string[];
  location_ids: string[];
  include_future_locations: boolean;
  created_at: string;
}

export interface Merchant {
  id: string;
  external_ref: string | null;
  name: LocalizedText;
  status: "active" | "suspended";
  owner: { name: string; email: string; phone: string; invitation: "sent" | "accepted" };
  business_profile_status: BusinessProfileStatus;
  created_at: string;
}

export interface Brand {
  id: string;
  merchant_id: string;
  external_ref: string | null;
  name: LocalizedText;
  description: LocalizedText | null;
  logo_url: string | null;
  cover_image_url: string | null;
  created_at: string;
  updated_at: string;
}

export interface OpeningRange {
  opens: string;
  closes: string;
}

export interface Location {
  id: string;
  merchant_id: string;
  brand_id: string;
  external_ref: string | null;
  name: LocalizedText;
  status: "open" | "closed" | "paused";
  phone: string | null;
  email: string | null;
  address: {
    line1: string | null;
    district: string | null;
    city: string | null;
    postal_code: string | null;
    country: string;
    latitude: number | null;
    longitude: number | null;
  };
  timezone: string;
  opening_hours: Record<string, OpeningRange[]>;
  created_at: string;
  updated_at: string;
}

export interface ChannelConnection {
  id: string;
  location_id: string;
  channel: string;
  status: "active" | "needs_reauthorization" | "paused" | "failing" | "disconnected";
  updated_at: string;
}

export interface Channel {
  id: string;
  name: LocalizedText;
  capabilities: string[];
}

export interface ProblemItem {
  external_ref: string | null;
  field: string | null;
  code: string;
  message: string;
}

export interface Job {
  id: string;
  merchant_id: string;
  type: "menu_import" | "menu_publish";
  brand_id: string;
  status: "pending" | "running" | "succeeded" | "partially_failed" | "failed";
  errors: ProblemItem[];
  results: {
    location_id: string;
    channel_connection_id: string;
    channel: string;
    status: "pending" | "succeeded" | "failed";
    errors: ProblemItem[];
  }[];
  created_at: string;
  completed_at: string | null;
}

export interface Menu {
  brand_id: string;
  version: number;
  updated_at: string;
  categories: unknown[];
  modifier_groups: unknown[];
  products: unknown[];
}

export type BusinessProfileStatus = "draft" | "in_review" | "approved" | "rejected";

export interface BusinessDocument {
  id: string;
  type: string;
  status: "pending" | "accepted" | "rejected";
  file_name: string;
  rejection_reason: string | null;
  uploaded_at: string;
}

export interface BusinessProfile {
  merchant_id: string;
  status: BusinessProfileStatus;
  details: Record<string, unknown> | null;
  documents: BusinessDocument[];
  required_documents: string[];
  review: { submitted_at: string | null; reviewed_at: string | null; notes: string | null };
}

export interface Application {
  id: string;
  clientId: string;
  clientSecret: string;
  /** After a rotation, the old secret and the sandbox ms until which it still works (24 h). */
  previousSecret: { secret: string; until: number } | null;
  kind: "platform" | "direct";
  /** Scopes approved for the application. */
  scopes: string[];
  status: "active" | "suspended";
}
