import type { IdFactory } from "../ids.ts";
import type { Location } from "./resources.ts";
import type { SandboxSeed } from "./seed.ts";
import { seedMenu } from "./seed-menu.ts";
import type { SandboxStore } from "./store.ts";

const EVERY_DAY = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

const CITY_COORDINATES: Record<string, [number, number]> = {
  Riyadh: [24.7136, 46.6753],
  Jeddah: [21.5433, 39.1728],
};

/**
 * Fills an empty store from a seed: applications, channels, merchants with brands (each with a first menu),
 * locations, connections.
 */
export function applySeed(store: SandboxStore, seed: SandboxSeed, ids: IdFactory, nowIso: string): void {
  for (const app of seed.applications) {
    store.applications.set(app.applicationId, {
      id: app.applicationId,
      clientId: app.clientId,
      clientSecret: app.clientSecret,
      previousSecret: null,
      kind: app.kind,
      scopes: app.scopes,
      status: "active",
    });
  }
  for (const channel of seed.channels) store.channels.set(channel.id, { ...channel });

  for (const m of seed.merchants) {
    store.merchants.set(m.id, {
      id: m.id,
      external_ref: null,
      name: m.name,
      status: "active",
      owner: {
        name: "Sandbox Owner",
        email: `owner+${m.id}@example.com`,
        phone: "+966500000000",
        invitation: "accepted",
      },
      business_profile_status: "approved",
      created_at: nowIso,
    });
    store.profiles.set(m.id, {
      merchant_id: m.id,
      status: "approved",
      details: null,
      documents: [],
      required_documents: ["commercial_registration", "vat_certificate"],
      review: { submitted_at: nowIso, reviewed_at: nowIso, notes: null },
    });
    const locationIds: string[] = [];
    for (const b of m.brands) {
      store.brands.set(b.id, {
        id: b.id,
        merchant_id: m.id,
        external_ref: null,
        name: b.name,
        description: null,
        logo_url: null,
        cover_image_url: null,
        created_at: nowIso,
        updated_at: nowIso,
      });
      store.menus.set(b.id, seedMenu(b.id, nowIso));
      for (const l of b.locations) {
        const [lat, lng] = CITY_COORDINATES[l.city] ?? [24.7136, 46.6753];
        const location: Location = {
          id: l.id,
          merchant_id: m.id,
          brand_id: b.id,
          external_ref: null,
          name: l.name,
          status: "open",
          phone: "+966110000000",
          email: null,
          address: {
            line1: null,
            district: null,
            city: l.city,
            postal_code: null,
            country: "SA",
            latitude: lat,
            longitude: lng,
          },
          timezone: l.timezone,
          opening_hours: Object.fromEntries(EVERY_DAY.map((d) => [d, [{ opens: "10:00", closes: "02:00" }]])),
          created_at: nowIso,
          updated_at: nowIso,
        };
        store.locations.set(l.id, location);
        locationIds.push(l.id);
        for (const channel of l.channels) {
          const id = ids.next("chc");
          store.channelConnections.set(id, {
            id,
            location_id: l.id,
            channel,
            status: "active",
            updated_at: nowIso,
          });
        }
      }
    }
    const apps = m.applications ?? seed.applications.map((a) => a.applicationId);
    for (const applicationId of apps) {
      const id = ids.next("con");
      store.connections.set(id, {
        id,
        application_id: applicationId,
        merchant_id: m.id,
        external_ref: null,
        status: "active",
        scopes: m.grantedScopes ?? store.applications.get(applicationId)?.scopes ?? [],
        location_ids: [...locationIds],
        include_future_locations: true,
        created_at: nowIso,
      });
    }
  }
}
