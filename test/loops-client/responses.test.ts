import { LoopsClient, LoopsError } from "@loops-sync/loops-client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { eventBody, orderBody } from "../support/api-bodies.ts";
import { json, type LoopsTestServer, startLoopsTestServer } from "../support/loops-test-server.ts";

let server: LoopsTestServer;
let client: LoopsClient;
const warnings: Array<{ obj: object; msg: string }> = [];

beforeAll(async () => {
  server = await startLoopsTestServer();
  client = new LoopsClient({
    apiUrl: server.apiUrl,
    authUrl: server.authUrl,
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    logger: { warn: (obj, msg) => warnings.push({ obj, msg }) },
  });
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

const m = () => client.forMerchant("mer_1");

describe("problem+json", () => {
  it("is parsed into the error's fields", async () => {
    server.on("POST", "/brands", (_q, res) => {
      res.writeHead(409, { "content-type": "application/problem+json" });
      res.end(
        JSON.stringify({
          type: "https://docs.example/errors/external_ref_conflict",
          title: "External reference already used",
          status: 409,
          code: "external_ref_conflict",
          detail: "brand b-1 exists",
          request_id: "req_abc",
          existing_id: "brd_9",
          errors: [{ field: "external_ref", message: "already used" }],
        }),
      );
    });
    const error = await m()
      .brands.create({ external_ref: "b-1", name: { en: "A", ar: "ب" } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoopsError);
    expect(error).toMatchObject({
      status: 409,
      code: "external_ref_conflict",
      title: "External reference already used",
      detail: "brand b-1 exists",
      type: "https://docs.example/errors/external_ref_conflict",
      requestId: "req_abc",
      existingId: "brd_9",
      errors: [{ field: "external_ref", message: "already used" }],
      retryable: false,
      method: "POST",
      route: "/brands",
    });
    expect((error as Error).message).toContain("409 external_ref_conflict");
  });

  it("a non-JSON error body still gives status and a code", async () => {
    server.on("GET", "/connection", (_q, res) => {
      res.writeHead(403, { "content-type": "text/html" });
      res.end("<html>forbidden</html>");
    });
    const error = await m()
      .connection.get()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 403, code: "http_403", errors: [] });
  });
});

describe("tolerant reading", () => {
  it("keeps unknown fields and unknown enum values, logging each unknown value once", async () => {
    server.on("GET", "/orders/ord_1", (_q, res) =>
      json(res, 200, orderBody("ord_1", { status: "on_hold", brand_new_field: { x: 1 } })),
    );
    warnings.length = 0;
    const order = await m().orders.get("ord_1");
    await m().orders.get("ord_1");
    expect(order.status).toBe("on_hold");
    expect(order["brand_new_field"]).toEqual({ x: 1 });
    expect(warnings).toEqual([
      { obj: { field: "order.status", value: "on_hold" }, msg: expect.stringContaining("kept as-is") },
    ]);
  });

  it("accepts any event type", async () => {
    server.on("GET", "/events/evt_1", (_q, res) =>
      json(res, 200, eventBody("evt_1", { type: "loyalty.points_added" })),
    );
    expect((await m().events.get("evt_1")).type).toBe("loyalty.points_added");
  });

  it("a 2xx missing a required field is a bad_response LoopsError naming it", async () => {
    const broken = orderBody("ord_2");
    delete broken["version"];
    server.on("GET", "/orders/ord_2", (_q, res) => json(res, 200, broken));
    const error = await m()
      .orders.get("ord_2")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoopsError);
    expect((error as LoopsError).kind).toBe("bad_response");
    expect(error).toMatchObject({ code: "invalid_response", field: "version" });
  });
});

describe("pagination", () => {
  it("follows next_cursor to the last page", async () => {
    const pages: Record<string, { ids: string[]; next: string | null }> = {
      "": { ids: ["ord_5", "ord_4"], next: "c2" },
      c2: { ids: ["ord_3", "ord_2"], next: "c3" },
      c3: { ids: ["ord_1"], next: null },
    };
    server.on("GET", "/orders", (q, res) => {
      const page = pages[q.query.get("cursor") ?? ""]!;
      json(res, 200, { data: page.ids.map((id) => orderBody(id)), next_cursor: page.next });
    });
    const ids: string[] = [];
    for await (const order of m().orders.iterate({ limit: 2, status: "delivered" })) ids.push(order.id);
    expect(ids).toEqual(["ord_5", "ord_4", "ord_3", "ord_2", "ord_1"]);
    expect(server.requests.map((r) => r.query.get("cursor"))).toEqual([null, "c2", "c3"]);
    expect(
      server.requests.every((r) => r.query.get("limit") === "2" && r.query.get("status") === "delivered"),
    ).toBe(true);
  });

  it("stops instead of looping when a cursor repeats", async () => {
    server.on("GET", "/brands", (_q, res) => json(res, 200, { data: [], next_cursor: "same" }));
    const error = await (async () => {
      for await (const _ of m().brands.iterate()) {
        // drain
      }
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoopsError);
    expect((error as LoopsError).kind).toBe("bad_response");
    expect(server.requests).toHaveLength(2);
  });

  it("walks events with after = last id while has_more", async () => {
    const all = ["evt_1", "evt_2", "evt_3", "evt_4", "evt_5"];
    server.on("GET", "/events", (q, res) => {
      const after = q.query.get("after");
      const start = after ? all.indexOf(after) + 1 : 0;
      const limit = Number(q.query.get("limit") ?? 50);
      const data = all.slice(start, start + limit).map((id) => eventBody(id));
      json(res, 200, { data, has_more: start + limit < all.length });
    });
    const ids: string[] = [];
    for await (const event of m().events.iterate({ after: "evt_1", limit: 2, types: "order.*" }))
      ids.push(event.id);
    expect(ids).toEqual(["evt_2", "evt_3", "evt_4", "evt_5"]);
    expect(server.requests.map((r) => r.query.get("after"))).toEqual(["evt_1", "evt_3"]);
    expect(server.requests.every((r) => r.query.get("types") === "order.*")).toBe(true);
  });
});

describe("local validation", () => {
  it("refuses bad input before sending anything", async () => {
    const error = await m()
      .orders.list({ limit: 500 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoopsError);
    expect((error as LoopsError).kind).toBe("invalid");
    expect(error).toMatchObject({ field: "limit", code: "invalid_argument" });
    await expect(
      m().locations.create({
        external_ref: "bad ref!",
        brand_id: "brd_1",
        name: { en: "A", ar: "ب" },
        phone: "+966500000000",
        address: { line1: "x", city: "y", latitude: 1, longitude: 2 },
        opening_hours: {
          sunday: [],
          monday: [],
          tuesday: [],
          wednesday: [],
          thursday: [],
          friday: [],
          saturday: [],
        },
      }),
    ).rejects.toMatchObject({ field: "external_ref" });
    expect(() => client.forMerchant("loc_1")).toThrow(LoopsError);
    expect(server.requests).toHaveLength(0);
  });
});

describe("order list pages", () => {
  it("return a malformed order in `rejected`, naming the field, beside the valid ones", async () => {
    const good = orderBody("ord_good");
    const bad = { ...orderBody("ord_bad"), version: "seven" };
    server.on("GET", "/orders", (_q, res) => json(res, 200, { data: [good, bad], next_cursor: null }));
    const page = await m().orders.list();
    expect(page.data.map((o) => o.id)).toEqual(["ord_good"]);
    expect(page.rejected).toHaveLength(1);
    expect(page.rejected[0]).toMatchObject({ index: 1, id: "ord_bad", item: bad });
    expect(page.rejected[0]!.error).toMatch(/^version: /);
  });
});
