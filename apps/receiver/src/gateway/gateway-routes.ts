/**
 * What a write returns, so the mirror knows how to apply it (`WriteMirror`): a merchant it created, a
 * merchant, a business profile or one of its documents, a brand, a job (menu import or publish), a location,
 * a sandbox order.
 */
export type WriteKind =
  | "merchant_created"
  | "merchant"
  | "business_profile"
  | "document"
  | "brand"
  | "job"
  | "location"
  | "order";

/** One of the spec's write routes, as the gateway passes it on. */
export interface GatewayRoute {
  method: "POST" | "PUT" | "PATCH";
  /** The spec's template, the label of metrics and traces: `/locations/{location_id}`. */
  route: string;
  kind: WriteKind;
  /** Largest body read (the spec's limit where it names one; MB = 10^6 bytes). */
  maxBodyBytes: number;
  /** multipart/form-data whose `file` part may hold at most this many bytes (a document). */
  maxFileBytes?: number;
  /** The spec forbids Service-Merchant-Id here (POST /merchants). */
  noMerchantHeader?: boolean;
}

/** A menu import's JSON, up to 5 MB (spec, Limits). */
export const MAX_MENU_JSON_BYTES = 5_000_000;
/** A business document, up to 4 MB (spec, Limits). */
export const MAX_DOCUMENT_FILE_BYTES = 4_000_000;
/** Room for a document's multipart envelope (boundaries, part headers, the `type` field). */
const MULTIPART_ENVELOPE_BYTES = 16_384;
/** Every other write: the spec names no limit; none of its bodies comes near this. */
const DEFAULT_MAX_BODY_BYTES = 1_000_000;

const write = (
  method: GatewayRoute["method"],
  route: string,
  kind: WriteKind,
  more: Partial<GatewayRoute> = {},
): GatewayRoute => ({ method, route, kind, maxBodyBytes: DEFAULT_MAX_BODY_BYTES, ...more });

/** The spec's writes (Endpoints), and the sandbox's test order. Reads are the mirror's job. */
export const GATEWAY_ROUTES: readonly GatewayRoute[] = [
  write("POST", "/merchants", "merchant_created", { noMerchantHeader: true }),
  write("PATCH", "/merchant", "merchant"),
  write("PUT", "/merchant/business-profile", "business_profile"),
  write("POST", "/merchant/business-profile/documents", "document", {
    maxBodyBytes: MAX_DOCUMENT_FILE_BYTES + MULTIPART_ENVELOPE_BYTES,
    maxFileBytes: MAX_DOCUMENT_FILE_BYTES,
  }),
  write("POST", "/merchant/business-profile/submit", "business_profile"),
  write("POST", "/brands", "brand"),
  write("PATCH", "/brands/{brand_id}", "brand"),
  write("PUT", "/brands/{brand_id}/menu", "job", { maxBodyBytes: MAX_MENU_JSON_BYTES }),
  write("POST", "/brands/{brand_id}/menu/publish", "job"),
  write("POST", "/locations", "location"),
  write("PATCH", "/locations/{location_id}", "location"),
  write("POST", "/sandbox/orders", "order"),
];

/** An id in a path: the spec's `prefix_…` ids. Anything else (dots, escapes) is no route, never sent. */
const ID = "[A-Za-z0-9_-]{1,128}";

const patterns = GATEWAY_ROUTES.map((r) => ({
  r,
  re: new RegExp(`^${r.route.replace(/\{[a-z_]+\}/g, ID)}$`),
}));

/** Where a request goes: a write route, 405 (a path the gateway writes, another method), or 404. */
export type RouteMatch = { found: GatewayRoute } | { notAllowed: string[] } | { notFound: true };

/** Matches a method and a path (after `/loops/v1`) to a write route. */
export function matchGatewayRoute(method: string, path: string): RouteMatch {
  const allowed: string[] = [];
  for (const { r, re } of patterns) {
    if (!re.test(path)) continue;
    if (r.method === method) return { found: r };
    allowed.push(r.method);
  }
  return allowed.length > 0 ? { notAllowed: allowed } : { notFound: true };
}
