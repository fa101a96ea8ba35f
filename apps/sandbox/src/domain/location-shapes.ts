import type { Location } from "./resources.ts";

/** The read shape of GET /locations and GET /locations/{id}. */
export function locationReadShape(l: Location): Record<string, unknown> {
  return {
    id: l.id,
    merchant_id: l.merchant_id,
    brand_id: l.brand_id,
    name: l.name,
    status: l.status,
    timezone: l.timezone,
    address: {
      line1: l.address.line1,
      city: l.address.city,
      country: l.address.country,
      latitude: l.address.latitude,
      longitude: l.address.longitude,
    },
    updated_at: l.updated_at,
  };
}

/** The create/update response shape of POST and PATCH /locations. */
export function locationWriteShape(l: Location): Record<string, unknown> {
  return {
    id: l.id,
    merchant_id: l.merchant_id,
    brand_id: l.brand_id,
    external_ref: l.external_ref,
    name: l.name,
    phone: l.phone,
    email: l.email,
    address: l.address,
    timezone: l.timezone,
    opening_hours: l.opening_hours,
    created_at: l.created_at,
    updated_at: l.updated_at,
  };
}
