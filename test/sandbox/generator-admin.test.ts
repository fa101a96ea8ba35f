import { type Order, type Sandbox, type SandboxEvent, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

describe("order generator and admin API", () => {
  let sandbox: Sandbox;
  const admin = async <T>(path: string, body?: unknown, method = body === undefined ? "GET" : "POST") => {
    const r = await fetch(`${sandbox.url}/admin${path}`, {
      method,
      ...(body !== undefined
        ? { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }
        : {}),
    });
    return { status: r.status, body: (r.status === 204 ? null : await r.json()) as T };
  };

  beforeAll(async () => {
    sandbox = await startSandbox({ randomSeed: 5 });
  });
  afterAll(() => sandbox.close());

  it("creates orders at the rate asked and walks them through lifecycles with origin channel", async () => {
    const started = await admin("/generator/start", {
      ratePerSecond: 100,
      advanceEveryMs: 20,
      merchantIds: ["mer_demo_2"],
    });
    expect(started.status).toBe(200);
    await new Promise((r) => setTimeout(r, 700));
    await admin("/generator/stop", {});
    const orders = (await admin<{ data: Order[] }>("/truth/orders?merchant_id=mer_demo_2")).body.data;
    // 100/s for ~0.7 s; generous bounds because the timer is shared with everything else on the machine.
    expect(orders.length).toBeGreaterThan(20);
    expect(orders.length).toBeLessThan(120);
    expect((await admin<{ data: Order[] }>("/truth/orders?merchant_id=mer_demo_1")).body.data).toHaveLength(
      0,
    );
    const statuses = new Set(orders.map((o) => o.status));
    expect(statuses.size).toBeGreaterThan(3);
    for (const o of orders) {
      expect(o.version).toBe(o.status_history.length);
      expect(o.status_history[0]!.status).toBe("placed");
    }
    const events = (await admin<{ data: SandboxEvent[] }>("/truth/events?merchant_id=mer_demo_2")).body.data;
    expect(events.every((e) => e.origin.type === "channel" && e.origin.application_id === null)).toBe(true);
    // For every order, the status_changed events replay its history in version order.
    const byOrder = new Map<string, SandboxEvent[]>();
    for (const e of events)
      byOrder.set(String(e.data.order_id), [...(byOrder.get(String(e.data.order_id)) ?? []), e]);
    for (const o of orders) {
      const own = byOrder.get(o.id)!;
      expect(own.map((e) => e.data.version)).toEqual(o.status_history.map((_, i) => i + 1));
      expect(own.at(-1)!.data.status).toBe(o.status);
    }
  });

  it("advances and creates orders, revokes merchants and reports stats over HTTP", async () => {
    const made = await admin<Order>("/orders", {
      merchant_id: "mer_demo_1",
      location_id: "loc_demo_1a",
      channel: "jahez",
    });
    expect(made.status).toBe(201);
    expect(made.body.channel).toBe("jahez");
    const advanced = await admin<Order>(`/orders/${made.body.id}/advance`, { status: "cancelled" });
    expect(advanced.body).toMatchObject({ status: "cancelled", version: 2 });
    const refused = await admin<{ code: string }>(`/orders/${made.body.id}/advance`, {});
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("invalid_request");
    const stats = await admin<{ eventsEmitted: number }>("/stats");
    expect(stats.body.eventsEmitted).toBe(sandbox.truth.events().length);
    expect((await admin("/stats/reset", {})).status).toBe(204);
    expect(sandbox.stats().eventsEmitted).toBe(0);
    expect((await admin("/merchants/mer_nope/revoke", {})).status).toBe(404);
    expect((await admin("/merchants/mer_demo_1/revoke", {})).status).toBe(200);
    expect(sandbox.truth.events("mer_demo_1").at(-1)!.type).toBe("connection.revoked");
    const clock = await admin<{ now: string }>("/clock/advance", { seconds: 3600 });
    expect(Date.parse(clock.body.now) - Date.now()).toBeGreaterThan(3500_000);
  });

  it("rotates a client secret keeping the old one for 24 hours, and suspends applications", async () => {
    const token = (secret: string) =>
      fetch(sandbox.authUrl, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `grant_type=client_credentials&client_id=sandbox-client&client_secret=${secret}`,
      });
    const rotated = await admin<{ old_secret_valid_until: string }>(
      "/applications/app_loops_sync/rotate-secret",
      { client_secret: "sandbox-secret-2" },
    );
    expect(rotated.status).toBe(200);
    expect((await token("sandbox-secret")).status).toBe(200);
    expect((await token("sandbox-secret-2")).status).toBe(200);
    sandbox.clock.advance(24 * 3600_000 + 1000);
    expect((await token("sandbox-secret")).status).toBe(401);
    expect((await token("sandbox-secret-2")).status).toBe(200);
    await admin("/applications/app_loops_sync/suspend", {});
    const suspended = await token("sandbox-secret-2");
    expect(suspended.status).toBe(403);
    expect(((await suspended.json()) as { code: string }).code).toBe("application_suspended");
    await admin("/applications/app_loops_sync/resume", {});
    expect((await token("sandbox-secret-2")).status).toBe(200);
  });

  it("patches an order through admin with an order.updated event and a new version", async () => {
    const order = sandbox.createOrder({ merchantId: "mer_demo_2" });
    const patched = await admin<Order>(`/orders/${order.id}`, { notes: "ring twice" }, "PATCH");
    expect(patched.body).toMatchObject({ notes: "ring twice", version: 2 });
    const last = sandbox.truth.events("mer_demo_2").at(-1)!;
    expect(last).toMatchObject({
      type: "order.updated",
      data: { order_id: order.id, version: 2, status: "placed" },
    });
    expect((await admin(`/orders/${order.id}`, { status: "delivered" }, "PATCH")).status).toBe(400);
  });
});
