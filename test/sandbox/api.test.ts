import { type Order, type Sandbox, type SandboxEvent, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiCaller, apiAs, getToken, type ProblemBody } from "../support/sandbox-api.ts";

interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

describe("sandbox API", () => {
  let sandbox: Sandbox;
  let api: ApiCaller;
  let token: string;

  beforeAll(async () => {
    sandbox = await startSandbox();
    token = await getToken(sandbox);
    api = apiAs(sandbox, token);
  });
  afterAll(() => sandbox.close());

  describe("auth and tenancy", () => {
    it("issues 900 s bearer tokens for client credentials and refuses wrong ones", async () => {
      const wrong = await fetch(sandbox.authUrl, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=client_credentials&client_id=sandbox-client&client_secret=nope",
      });
      expect(wrong.status).toBe(401);
      const text = await wrong.text();
      expect(text).not.toContain("nope");
      expect(JSON.parse(text).code).toBe("unauthorized");
      const badGrant = await fetch(sandbox.authUrl, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=password&client_id=sandbox-client&client_secret=sandbox-secret",
      });
      expect(badGrant.status).toBe(400);
    });

    it("answers problem+json 401 without a valid bearer token", async () => {
      const r = await apiAs(sandbox, "not-a-token")("/orders");
      expect(r.status).toBe(401);
      expect(r.headers.get("content-type")).toBe("application/problem+json");
      expect(r.body).toMatchObject({ status: 401, code: "unauthorized", title: expect.any(String) });
      expect(r.body.type).toMatch(/\/errors\/unauthorized$/);
      expect(r.body.request_id).toMatch(/^req_/);
    });

    it("requires Service-Merchant-Id of platform apps but not of a direct integration", async () => {
      const r = await apiAs(sandbox, token, null)("/orders");
      expect(r.status).toBe(400);
      expect(r.body.code).toBe("merchant_required");
      const direct = await getToken(sandbox, {
        clientId: "sandbox-direct-client",
        clientSecret: "sandbox-direct-secret",
      });
      const conn = await apiAs(sandbox, direct, null)<{ merchant_id: string }>("/connection");
      expect(conn.status).toBe(200);
      expect(conn.body.merchant_id).toBe("mer_demo_1");
      const other = await apiAs(sandbox, direct, "mer_demo_2")("/orders");
      expect(other.status).toBe(404);
      expect(other.body.code).toBe("merchant_not_found");
    });

    it("serves the connection, the channel catalog and locations with their channel connections", async () => {
      const conn = await api<{ id: string; status: string; scopes: string[]; location_ids: string[] }>(
        "/connection",
      );
      expect(conn.body).toMatchObject({ status: "active", location_ids: ["loc_demo_1a", "loc_demo_1b"] });
      expect(conn.body.id).toMatch(/^con_/);
      expect(conn.body.scopes).toEqual(
        expect.arrayContaining(["locations:read", "orders:read", "events:read"]),
      );
      const channels = await api<{ data: { id: string; capabilities: string[] }[] }>("/channels");
      expect(channels.body.data.map((c) => c.id)).toEqual(["hungerstation", "jahez", "keeta", "careem"]);
      const page1 = await api<Page<{ id: string; timezone: string }>>("/locations?limit=1");
      expect(page1.body.data[0]).toMatchObject({ id: "loc_demo_1a", timezone: "Asia/Riyadh" });
      const page2 = await api<Page<{ id: string }>>(`/locations?limit=1&cursor=${page1.body.next_cursor}`);
      expect(page2.body).toMatchObject({ data: [{ id: "loc_demo_1b" }], next_cursor: null });
      const ccs = await api<{ data: { channel: string; status: string }[] }>(
        "/locations/loc_demo_1a/channel-connections",
      );
      expect(ccs.body.data.map((c) => [c.channel, c.status])).toEqual([
        ["hungerstation", "active"],
        ["jahez", "active"],
      ]);
      expect((await api("/locations/loc_demo_2a")).status).toBe(404);
    });

    it("refuses a revoked connection with 403 connection_not_active", async () => {
      const own = await startSandbox();
      try {
        const t = await getToken(own);
        own.revokeMerchant("mer_demo_2");
        const r = await apiAs(own, t, "mer_demo_2")("/orders");
        expect(r.status).toBe(403);
        expect(r.body.code).toBe("connection_not_active");
        expect(own.truth.events("mer_demo_2").map((e) => e.type)).toContain("connection.revoked");
        expect((await apiAs(own, t, "mer_demo_1")("/orders")).status).toBe(200);
      } finally {
        await own.close();
      }
    });

    it("tells an unapproved scope from an ungranted one", async () => {
      const own = await startSandbox({
        seed: {
          applications: [
            {
              clientId: "a",
              clientSecret: "b",
              applicationId: "app_narrow",
              kind: "platform",
              scopes: ["orders:read"],
            },
          ],
          channels: [{ id: "jahez", name: { en: "Jahez", ar: "جاهز" }, capabilities: [] }],
          merchants: [
            {
              id: "mer_x",
              name: { en: "X", ar: "س" },
              grantedScopes: ["events:read"],
              brands: [
                {
                  id: "brd_x",
                  name: { en: "X", ar: "س" },
                  locations: [
                    {
                      id: "loc_x",
                      name: { en: "X", ar: "س" },
                      city: "Riyadh",
                      timezone: "Asia/Riyadh",
                      channels: ["jahez"],
                    },
                  ],
                },
              ],
            },
          ],
        },
      });
      try {
        const call = apiAs(own, await getToken(own, { clientId: "a", clientSecret: "b" }), "mer_x");
        expect((await call("/events")).body.code).toBe("insufficient_scope");
        const notGranted = await call("/orders");
        expect(notGranted.status).toBe(403);
        expect(notGranted.body.code).toBe("scope_not_granted");
      } finally {
        await own.close();
      }
    });
  });

  describe("orders", () => {
    let created: Order;
    beforeAll(async () => {
      for (let i = 0; i < 7; i++) sandbox.createOrder({ merchantId: "mer_demo_1" });
      const r = await api<Order>("/sandbox/orders", {
        method: "POST",
        body: { location_id: "loc_demo_1b", channel: "keeta" },
      });
      expect(r.status).toBe(201);
      created = r.body;
    });

    it("files POST /sandbox/orders' events as a simulated channel's, with no application id", () => {
      const events = sandbox.truth.events("mer_demo_1").filter((e) => e.data.order_id === created.id);
      expect(events.map((e) => e.type)).toEqual(["order.created"]);
      expect(events[0]?.origin).toEqual({ type: "channel", application_id: null });
    });

    it("creates realistic orders with consistent totals and bilingual items", () => {
      for (const o of sandbox.truth.orders("mer_demo_1")) {
        const sum = o.items.reduce(
          (s, i) =>
            s +
            i.quantity *
              (i.unit_price.amount + i.modifiers.reduce((m, x) => m + x.quantity * x.unit_price.amount, 0)),
          0,
        );
        expect(o.totals.subtotal.amount).toBe(sum);
        expect(o.totals.tax.amount).toBe(
          Math.round((sum - o.totals.discount.amount + o.totals.delivery_fee.amount) * 0.15),
        );
        expect(o.totals.total.amount).toBe(
          sum - o.totals.discount.amount + o.totals.delivery_fee.amount + o.totals.tax.amount,
        );
        for (const item of o.items) expect(item.name.ar).toMatch(/[\u0600-\u06FF]/);
        expect(o.totals.total.currency).toBe("SAR");
      }
      expect(created).toMatchObject({
        channel: "keeta",
        location_id: "loc_demo_1b",
        status: "placed",
        version: 1,
      });
    });

    it("moves an order through its lifecycle, bumping version and history, with truthful origins", async () => {
      let o = sandbox.advanceOrder(created.id);
      o = sandbox.advanceOrder(o.id);
      expect(o.status).toBe("preparing");
      expect(o.version).toBe(3);
      expect(o.status_history.map((h) => h.status)).toEqual(["placed", "accepted", "preparing"]);
      expect(() => sandbox.advanceOrder(o.id, "rejected")).toThrow(/cannot move/);
      const got = await api<Order>(`/orders/${o.id}`);
      expect(got.body.version).toBe(3);
      expect(got.body.updated_at > created.updated_at).toBe(true);
      const events = sandbox.truth.events("mer_demo_1").filter((e) => e.data.order_id === created.id);
      expect(events.map((e) => [e.type, e.origin.type, e.origin.application_id, e.data.version])).toEqual([
        // POST /sandbox/orders makes a simulated channel's order, not the caller's own write.
        ["order.created", "channel", null, 1],
        ["order.status_changed", "system", null, 2],
        ["order.status_changed", "system", null, 3],
      ]);
    });

    it("lists newest update first, pages with opaque cursors, and filters", async () => {
      const seen: Order[] = [];
      let cursor: string | null = null;
      do {
        const r: { body: Page<Order> } = await api<Page<Order>>(
          `/orders?limit=3${cursor ? `&cursor=${cursor}` : ""}`,
        );
        seen.push(...r.body.data);
        cursor = r.body.next_cursor;
      } while (cursor);
      expect(seen).toHaveLength(8);
      expect(seen[0]!.id).toBe(created.id);
      for (let i = 1; i < seen.length; i++) expect(seen[i - 1]!.updated_at >= seen[i]!.updated_at).toBe(true);
      const keeta = await api<Page<Order>>("/orders?channel=keeta&status=preparing");
      expect(keeta.body.data.map((o) => o.id)).toEqual([created.id]);
      const since = await api<Page<Order>>(`/orders?updated_since=${encodeURIComponent(created.updated_at)}`);
      expect(since.body.data.map((o) => o.id)).toContain(created.id);
      const future = await api<Page<Order>>("/orders?created_from=2999-01-01T00:00:00Z");
      expect(future.body.data).toEqual([]);
    });

    it("refuses bad limits, cursors and filters with field errors", async () => {
      for (const q of [
        "limit=0",
        "limit=101",
        "limit=abc",
        "cursor=garbage",
        "status=lost",
        "updated_since=yesterday",
      ]) {
        const r = await api(`/orders?${q}`);
        expect(r.status, q).toBe(400);
        expect(r.body.code).toBe("invalid_request");
        expect(r.body.errors?.length, q).toBeGreaterThan(0);
      }
      expect((await api("/orders/ord_missing")).status).toBe(404);
      const otherMerchant = await apiAs(sandbox, token, "mer_demo_2")(`/orders/${created.id}`);
      expect(otherMerchant.status).toBe(404);
      const badLocation = await api("/sandbox/orders", {
        method: "POST",
        body: { location_id: "loc_demo_2a" },
      });
      expect(badLocation.status).toBe(404);
      const noBody = await api("/sandbox/orders", { method: "POST", body: {} });
      expect(noBody.body.errors?.[0]?.field).toBe("location_id");
    });
  });

  describe("events", () => {
    it("pages oldest first with after, types wildcards and has_more", async () => {
      const all = sandbox.truth.events("mer_demo_1");
      const pages: SandboxEvent[] = [];
      let after: string | undefined;
      for (let guard = 0; guard < 50; guard++) {
        const r = await api<{ data: SandboxEvent[]; has_more: boolean }>(
          `/events?limit=4${after ? `&after=${after}` : ""}`,
        );
        pages.push(...r.body.data);
        if (!r.body.has_more) break;
        after = r.body.data.at(-1)!.id;
      }
      expect(pages.map((e) => e.id)).toEqual(all.map((e) => e.id));
      expect([...pages.map((e) => e.id)].sort()).toEqual(pages.map((e) => e.id));
      const created = await api<{ data: SandboxEvent[] }>("/events?types=order.created&limit=100");
      expect(created.body.data.every((e) => e.type === "order.created")).toBe(true);
      const family = await api<{ data: SandboxEvent[] }>("/events?types=order.*&limit=100");
      expect(family.body.data.length).toBe(all.filter((e) => e.type.startsWith("order.")).length);
      const one = await api<SandboxEvent>(`/events/${all[0]!.id}`);
      expect(one.body).toEqual(all[0]);
    });

    it("answers an unknown or expired after with 400 invalid_request on field after", async () => {
      const own = await startSandbox();
      try {
        let call = apiAs(own, await getToken(own));
        own.createOrder({ merchantId: "mer_demo_1" });
        const first = own.truth.events("mer_demo_1")[0]!.id;
        expect((await call(`/events?after=${first}`)).status).toBe(200);
        expect((await call("/events?after=evt_unknown")).body.errors?.[0]?.field).toBe("after");
        own.clock.advance(31 * 24 * 3600_000);
        call = apiAs(own, await getToken(own));
        const expired = await call<ProblemBody>(`/events?after=${first}`);
        expect(expired.status).toBe(400);
        expect(expired.body.code).toBe("invalid_request");
        expect(expired.body.errors?.[0]?.field).toBe("after");
        expect((await call<{ data: unknown[] }>("/events")).body.data).toEqual([]);
        expect((await call(`/events/${first}`)).status).toBe(404);
      } finally {
        await own.close();
      }
    });

    it("counts calls per route template", () => {
      const stats = sandbox.stats();
      expect(stats.apiCalls["GET /orders/{order_id}"]).toBeGreaterThanOrEqual(3);
      expect(stats.apiCalls["POST /sandbox/orders"]).toBeGreaterThanOrEqual(1);
      expect(stats.tokenRequests).toBeGreaterThanOrEqual(1);
    });
  });
});
