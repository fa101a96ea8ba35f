import { LoopsClient, type MenuImportParams } from "@loops-sync/loops-client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { eventBody, orderBody } from "../support/api-bodies.ts";
import {
  json,
  type LoopsTestServer,
  type RecordedRequest,
  startLoopsTestServer,
} from "../support/loops-test-server.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NOW = "2026-11-22T05:00:00Z";
const name = { en: "Qahwa House", ar: "بيت القهوة" };
const week = {
  sunday: [{ opens: "08:00", closes: "23:00" }],
  monday: [{ opens: "08:00", closes: "23:00" }],
  tuesday: [{ opens: "08:00", closes: "23:00" }],
  wednesday: [{ opens: "08:00", closes: "23:00" }],
  thursday: [{ opens: "08:00", closes: "02:00" }],
  friday: [{ opens: "13:00", closes: "02:00" }],
  saturday: [],
};
const address = { line1: "King Fahd Rd", city: "Riyadh", country: "SA", latitude: 24.7, longitude: 46.6 };
const merchant = {
  id: "mer_1",
  external_ref: "m-1",
  name,
  status: "active",
  owner: { name: "Sara", email: "sara@example.com", phone: "+966500000001", invitation: "sent" },
  business_profile_status: "draft",
  created_at: NOW,
};
const brand = {
  id: "brd_1",
  merchant_id: "mer_1",
  external_ref: "b-1",
  name,
  created_at: NOW,
  updated_at: NOW,
};
const location = {
  id: "loc_1",
  merchant_id: "mer_1",
  brand_id: "brd_1",
  external_ref: "l-1",
  name,
  phone: "+966500000002",
  email: null,
  address,
  timezone: "Asia/Riyadh",
  opening_hours: week,
  created_at: NOW,
  updated_at: NOW,
};
const job = {
  id: "job_1",
  type: "menu_import",
  brand_id: "brd_1",
  status: "pending",
  created_at: NOW,
  completed_at: null,
};
const profile = {
  merchant_id: "mer_1",
  status: "draft",
  details: null,
  documents: [],
  required_documents: ["commercial_registration"],
  review: { submitted_at: null, reviewed_at: null, notes: null },
};
const details = {
  legal_name: "Qahwa House LLC",
  cr_number: "1010101010",
  vat_number: "300000000000003",
  national_address: {
    building_number: "1234",
    street: "King Fahd Rd",
    district: "Olaya",
    city: "Riyadh",
    postal_code: "12345",
    additional_number: "6789",
  },
};
const menu: MenuImportParams = {
  categories: [{ external_ref: "cat-1", name }],
  modifier_groups: [
    {
      external_ref: "mg-1",
      name,
      min_selections: 0,
      max_selections: 2,
      options: [{ external_ref: "opt-1", name, price: { amount: 200, currency: "SAR" } }],
    },
  ],
  products: [
    {
      external_ref: "p-1",
      category_external_ref: "cat-1",
      name,
      price: { amount: 1500, currency: "SAR" },
      modifier_group_external_refs: ["mg-1"],
    },
  ],
};

let server: LoopsTestServer;
let client: LoopsClient;

function answer(method: string, path: string, status: number, body: unknown): void {
  server.on(method, path, (_req, res) => json(res, status, body));
}

function last(): RecordedRequest {
  return server.requests.at(-1)!;
}

beforeAll(async () => {
  server = await startLoopsTestServer();
  client = new LoopsClient({
    apiUrl: server.apiUrl,
    authUrl: server.authUrl,
    clientId: server.clientId,
    clientSecret: server.clientSecret,
  });
  answer("GET", "/connection", 200, {
    id: "con_1",
    merchant_id: "mer_1",
    external_ref: null,
    status: "active",
    scopes: ["orders:read"],
    location_ids: ["loc_1"],
    include_future_locations: true,
    created_at: NOW,
  });
  answer("POST", "/merchants", 201, merchant);
  answer("GET", "/merchant", 200, merchant);
  answer("PATCH", "/merchant", 200, merchant);
  answer("PUT", "/merchant/business-profile", 200, { ...profile, details });
  answer("POST", "/merchant/business-profile/documents", 201, {
    id: "doc_1",
    type: "commercial_registration",
    status: "pending",
    file_name: "cr.pdf",
    rejection_reason: null,
    uploaded_at: NOW,
  });
  answer("POST", "/merchant/business-profile/submit", 200, { ...profile, status: "in_review" });
  answer("POST", "/brands", 201, brand);
  answer("GET", "/brands", 200, { data: [brand], next_cursor: null });
  answer("GET", "/brands/brd_1", 200, brand);
  answer("PATCH", "/brands/brd_1", 200, brand);
  answer("PUT", "/brands/brd_1/menu", 202, job);
  answer("GET", "/brands/brd_1/menu", 200, { ...menu, brand_id: "brd_1", version: 4, updated_at: NOW });
  answer("POST", "/brands/brd_1/menu/publish", 202, { ...job, type: "menu_publish", results: [] });
  answer("GET", "/jobs/job_1", 200, { ...job, status: "succeeded", errors: [], completed_at: NOW });
  answer("POST", "/locations", 201, location);
  answer("GET", "/locations", 200, { data: [{ ...location, status: "open" }], next_cursor: null });
  answer("GET", "/locations/loc_1", 200, { ...location, status: "open" });
  answer("PATCH", "/locations/loc_1", 200, location);
  answer("GET", "/locations/loc_1/channel-connections", 200, {
    data: [{ id: "chc_1", location_id: "loc_1", channel: "jahez", status: "active", updated_at: NOW }],
  });
  answer("GET", "/channels", 200, { data: [{ id: "jahez", capabilities: { menu_publish: true } }] });
  answer("GET", "/orders", 200, { data: [orderBody("ord_1")], next_cursor: null });
  answer("GET", "/orders/ord_1", 200, orderBody("ord_1"));
  answer("POST", "/sandbox/orders", 201, orderBody("ord_2"));
  answer("GET", "/events", 200, { data: [eventBody("evt_1")], has_more: false });
  answer("GET", "/events/evt_1", 200, eventBody("evt_1"));
  answer("POST", "/events/evt_1/redeliver", 202, {});
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

describe("every endpoint goes over the wire as the spec says", () => {
  const m = () => client.forMerchant("mer_1");

  it("POST /merchants sends no Service-Merchant-Id and an Idempotency-Key", async () => {
    const created = await client.merchants.create({
      external_ref: "m-1",
      name,
      owner: { name: "Sara", email: "sara@example.com", phone: "+966500000001" },
    });
    expect(created.id).toBe("mer_1");
    expect(last().headers["service-merchant-id"]).toBeUndefined();
    expect(last().headers["idempotency-key"]).toMatch(UUID);
    expect(JSON.parse(last().body.toString())).toMatchObject({
      external_ref: "m-1",
      owner: { name: "Sara" },
    });
  });

  it("every per-merchant call names the merchant; only the six listed POSTs carry a key", async () => {
    const calls: Array<[string, () => Promise<unknown>, boolean]> = [
      ["GET /connection", () => m().connection.get(), false],
      ["GET /merchant", () => m().merchant.get(), false],
      ["PATCH /merchant", () => m().merchant.update({ name }), false],
      ["PUT /merchant/business-profile", () => m().businessProfile.put(details), false],
      [
        "POST /merchant/business-profile/documents",
        () =>
          m().businessProfile.uploadDocument({
            type: "commercial_registration",
            file: Buffer.from("%PDF-1.7\n"),
          }),
        true,
      ],
      ["POST /merchant/business-profile/submit", () => m().businessProfile.submit(), true],
      ["POST /brands", () => m().brands.create({ external_ref: "b-1", name }), true],
      ["GET /brands", () => m().brands.list({ limit: 10 }), false],
      ["GET /brands/brd_1", () => m().brands.get("brd_1"), false],
      ["PATCH /brands/brd_1", () => m().brands.update("brd_1", { logo_url: null }), false],
      ["PUT /brands/brd_1/menu", () => m().menus.import("brd_1", menu), false],
      ["GET /brands/brd_1/menu", () => m().menus.get("brd_1"), false],
      [
        "POST /brands/brd_1/menu/publish",
        () => m().menus.publish("brd_1", { location_ids: ["loc_1"] }),
        true,
      ],
      ["GET /jobs/job_1", () => m().jobs.get("job_1"), false],
      [
        "POST /locations",
        () =>
          m().locations.create({
            external_ref: "l-1",
            brand_id: "brd_1",
            name,
            phone: "+966500000002",
            address,
            opening_hours: week,
          }),
        true,
      ],
      ["GET /locations", () => m().locations.list(), false],
      ["GET /locations/loc_1", () => m().locations.get("loc_1"), false],
      ["PATCH /locations/loc_1", () => m().locations.update("loc_1", { phone: "+966500000003" }), false],
      ["GET /locations/loc_1/channel-connections", () => m().locations.channelConnections("loc_1"), false],
      ["GET /channels", () => m().channels.list(), false],
      ["GET /orders", () => m().orders.list(), false],
      ["GET /orders/ord_1", () => m().orders.get("ord_1"), false],
      ["POST /sandbox/orders", () => m().sandbox.createOrder({ location_id: "loc_1" }), false],
      ["GET /events", () => m().events.list(), false],
      ["GET /events/evt_1", () => m().events.get("evt_1"), false],
      ["POST /events/evt_1/redeliver", () => m().events.redeliver("evt_1"), false],
    ];
    for (const [endpoint, call, keyed] of calls) {
      await call();
      const req = last();
      expect(`${req.method} ${req.path}`).toBe(endpoint);
      expect(req.headers["service-merchant-id"], endpoint).toBe("mer_1");
      if (keyed) expect(req.headers["idempotency-key"], endpoint).toMatch(UUID);
      else expect(req.headers["idempotency-key"], endpoint).toBeUndefined();
    }
    expect(server.requests).toHaveLength(calls.length);
  });

  it("uploads a document as multipart with its type and detected media type", async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
    const doc = await m().businessProfile.uploadDocument({ type: "owner_id", file: png, fileName: "id.png" });
    expect(doc.id).toBe("doc_1");
    const req = last();
    expect(req.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
    const body = req.body.toString("latin1");
    expect(body).toContain('name="type"\r\n\r\nowner_id');
    expect(body).toContain('name="file"; filename="id.png"\r\nContent-Type: image/png');
  });

  it("caller's own Idempotency-Key is sent as given", async () => {
    const key = "0b7f3c1e-6a2d-4c4e-9f1a-2b3c4d5e6f70";
    await m().brands.create({ external_ref: "b-1", name }, { idempotencyKey: key });
    expect(last().headers["idempotency-key"]).toBe(key);
  });

  it("sends every orders filter, dates as ISO 8601 UTC", async () => {
    await m().orders.list({
      location_id: "loc_1",
      channel: "jahez",
      status: "delivered",
      updated_since: new Date("2026-11-01T00:00:00Z"),
      created_from: "2026-10-01T03:00:00+03:00",
      created_to: "2026-11-01T00:00:00Z",
      limit: 100,
      cursor: "c_2",
    });
    expect(Object.fromEntries(last().query)).toEqual({
      location_id: "loc_1",
      channel: "jahez",
      status: "delivered",
      updated_since: "2026-11-01T00:00:00.000Z",
      created_from: "2026-10-01T00:00:00.000Z",
      created_to: "2026-11-01T00:00:00.000Z",
      limit: "100",
      cursor: "c_2",
    });
  });

  it("sends events filters with wildcard types joined by commas", async () => {
    await m().events.list({ after: "evt_0", types: ["order.*", "job.completed"], limit: 25 });
    expect(Object.fromEntries(last().query)).toEqual({
      after: "evt_0",
      types: "order.*,job.completed",
      limit: "25",
    });
  });

  it("parses what comes back into typed values", async () => {
    const order = await m().orders.get("ord_1");
    expect(order.totals.total).toEqual({ amount: 3500, currency: "SAR" });
    expect(order.items[0]?.modifiers?.[0]?.name?.en).toBe("Garlic");
    const channels = await m().channels.list();
    expect(channels[0]?.id).toBe("jahez");
    const conns = await m().locations.channelConnections("loc_1");
    expect(conns[0]?.status).toBe("active");
    const readMenu = await m().menus.get("brd_1");
    expect(readMenu.version).toBe(4);
  });
});
