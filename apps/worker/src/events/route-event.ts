/** Which task answers an event type. Anything unrecognised is `unhandled`: recorded, never a failure. */
export type EventRoute =
  | "order"
  | "revocation"
  | "job"
  | "go_live"
  | "brand"
  | "merchant"
  | "locations"
  | "unhandled";

export function routeEvent(type: string): EventRoute {
  if (type.startsWith("order.")) return "order";
  if (type === "connection.revoked") return "revocation";
  if (type === "job.completed") return "job";
  // Locations go live at approval: the merchant, its locations and their channel connections at once.
  if (type === "business_profile.approved") return "go_live";
  // Not in the spec's list of types; defended: the brand and its menu are read again.
  if (type.startsWith("brand.") || type.startsWith("menu.")) return "brand";
  if (
    type.startsWith("business_profile.") ||
    type.startsWith("merchant.") ||
    type.startsWith("connection.")
  ) {
    return "merchant";
  }
  if (type.startsWith("location.") || type.startsWith("channel_connection.")) return "locations";
  return "unhandled";
}

/** The upstream job a job.completed event names; the spec leaves its payload open, so several shapes are read. */
export function jobIdOf(data: unknown): string | undefined {
  if (typeof data !== "object" || data === null) return undefined;
  const d = data as { job_id?: unknown; id?: unknown; job?: { id?: unknown } | null };
  for (const candidate of [d.job_id, d.job?.id, d.id]) {
    if (typeof candidate === "string" && candidate.length > 0) return candidate;
  }
  return undefined;
}

/** The brand a brand.* or menu.* event names (data.brand_id, data.brand.id, or data.id of a brand event). */
export function brandIdOf(type: string, data: unknown): string | undefined {
  if (typeof data !== "object" || data === null) return undefined;
  const d = data as { brand_id?: unknown; id?: unknown; brand?: { id?: unknown } | null };
  const candidates = [d.brand_id, d.brand?.id, type.startsWith("brand.") ? d.id : undefined];
  for (const candidate of candidates) {
    if (typeof candidate === "string" && candidate.length > 0) return candidate;
  }
  return undefined;
}
