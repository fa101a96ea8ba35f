import { Hono } from "hono";
import { z } from "zod";
import { ORDER_STATUSES } from "../domain/resources.ts";
import { parseJsonBody } from "../http/body.ts";
import { notFound } from "../problem.ts";
import type { SandboxServices } from "../services.ts";
import { describeEndpoint } from "../webhooks/endpoints.ts";

const SYSTEM = { type: "system", application_id: null } as const;

const optionalJson = async <S extends z.ZodType>(
  c: Parameters<typeof parseJsonBody>[0],
  schema: S,
): Promise<z.output<S>> =>
  (c.req.header("content-type") ?? "").includes("application/json")
    ? parseJsonBody(c, schema)
    : schema.parse({});

/**
 * Ground truth and fault controls for tests, demos and benchmarks; unauthenticated, loopback only.
 * Mirrors the programmatic controls of `Sandbox`.
 */
export function adminRoutes(s: SandboxServices): Hono {
  const app = new Hono();
  const { store, log, world, faults, stats, dispatcher, generator, clock, tokens } = s;

  app.get("/truth/orders", (c) => c.json({ data: store.ordersOf(c.req.query("merchant_id")) }));
  app.get("/truth/orders/:id", (c) => {
    const order = store.orders.get(c.req.param("id"));
    if (!order) throw notFound(`order ${c.req.param("id")}`);
    return c.json(order);
  });
  app.get("/truth/events", (c) => c.json({ data: log.all(c.req.query("merchant_id")) }));
  app.get("/stats", (c) => c.json(stats.snapshot()));
  app.post("/stats/reset", (c) => {
    stats.reset();
    return c.body(null, 204);
  });

  app.get("/faults", (c) => c.json(faults.get()));
  app.put("/faults", async (c) =>
    c.json(faults.set(await parseJsonBody(c, z.record(z.string(), z.unknown())))),
  );

  app.post("/orders", async (c) => {
    const body = await parseJsonBody(
      c,
      z.object({
        merchant_id: z.string(),
        location_id: z.string().optional(),
        channel: z.string().optional(),
      }),
    );
    const order = world.createOrder(
      {
        merchantId: body.merchant_id,
        ...(body.location_id ? { locationId: body.location_id } : {}),
        ...(body.channel ? { channel: body.channel } : {}),
      },
      SYSTEM,
    );
    return c.json(order, 201);
  });
  app.post("/orders/:id/advance", async (c) => {
    const body = await optionalJson(c, z.object({ status: z.enum(ORDER_STATUSES).optional() }));
    return c.json(world.advanceOrder(c.req.param("id"), body.status, SYSTEM));
  });

  app.patch("/orders/:id", async (c) => {
    const body = await parseJsonBody(
      c,
      z
        .object({
          notes: z.string().nullable(),
          scheduled_for: z.iso.datetime({ offset: true }).nullable(),
          payment: z.object({ method: z.enum(["online", "cash", "card_on_delivery"]), paid: z.boolean() }),
          extensions: z.record(z.string(), z.unknown()),
        })
        .partial()
        .strict(),
    );
    const patch = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
    return c.json(world.updateOrder(c.req.param("id"), patch, SYSTEM));
  });

  app.post("/generator/start", async (c) => {
    const body = await parseJsonBody(
      c,
      z.object({
        ratePerSecond: z.number(),
        merchantIds: z.array(z.string()).optional(),
        advanceEveryMs: z.number().optional(),
      }),
    );
    generator.start({
      ratePerSecond: body.ratePerSecond,
      ...(body.merchantIds ? { merchantIds: body.merchantIds } : {}),
      ...(body.advanceEveryMs ? { advanceEveryMs: body.advanceEveryMs } : {}),
    });
    return c.json({ running: true });
  });
  app.post("/generator/stop", (c) => {
    generator.stop();
    return c.json({ running: false });
  });

  app.post("/merchants/:id/revoke", (c) => {
    world.revokeMerchant(c.req.param("id"));
    return c.json({ merchant_id: c.req.param("id"), status: "revoked" });
  });

  app.post("/merchants/:id/reconnect", (c) => {
    const made = world.reconnectMerchant(c.req.param("id"));
    return c.json({ merchant_id: c.req.param("id"), connection_ids: made.map((m) => m.id) });
  });

  app.post("/merchants/:id/business-profile/review", async (c) => {
    const body = await parseJsonBody(
      c,
      z.object({ decision: z.enum(["approved", "rejected"]), notes: z.string().optional() }),
    );
    const profile = store.profiles.get(c.req.param("id"));
    if (!profile) throw notFound(`merchant ${c.req.param("id")}`);
    s.reviewer.decide(profile, body.decision, body.notes ?? null);
    return c.json(profile);
  });

  app.get("/webhook-endpoints", (c) => c.json({ data: dispatcher.endpoints.all().map(describeEndpoint) }));
  app.post("/webhook-endpoints", async (c) => {
    const body = await parseJsonBody(
      c,
      z.object({
        url: z.string(),
        secrets: z.array(z.string()),
        types: z.array(z.string()).optional(),
        application_id: z.string().optional(),
      }),
    );
    const endpoint = dispatcher.endpoints.add({
      url: body.url,
      secrets: body.secrets,
      ...(body.types ? { types: body.types } : {}),
      ...(body.application_id ? { applicationId: body.application_id } : {}),
    });
    return c.json(describeEndpoint(endpoint), 201);
  });
  app.patch("/webhook-endpoints/:id", async (c) => {
    const body = await parseJsonBody(
      c,
      z.object({
        url: z.string().optional(),
        secrets: z.array(z.string()).optional(),
        types: z.array(z.string()).optional(),
        enabled: z.boolean().optional(),
      }),
    );
    const patch = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
    return c.json(describeEndpoint(dispatcher.endpoints.update(c.req.param("id"), patch)));
  });
  app.delete("/webhook-endpoints/:id", (c) => {
    dispatcher.endpoints.remove(c.req.param("id"));
    return c.body(null, 204);
  });
  app.post("/webhook-endpoints/:id/test", (c) => {
    const merchant = store.merchants.keys().next().value ?? "mer_unknown";
    return c.json(dispatcher.sendTest(c.req.param("id"), merchant), 202);
  });
  app.get("/deliveries", (c) => c.json({ data: dispatcher.deliveries() }));
  app.post("/deliveries/flush", async (c) => {
    await dispatcher.flush();
    return c.body(null, 204);
  });

  app.get("/clock", (c) => c.json({ now: clock.iso(), time_scale: clock.timeScale }));
  app.post("/clock/advance", async (c) => {
    const body = await parseJsonBody(c, z.object({ seconds: z.number().min(0) }));
    clock.advance(body.seconds * 1000);
    return c.json({ now: clock.iso(), time_scale: clock.timeScale });
  });
  app.post("/tokens/expire", (c) => c.json({ expired: tokens.expireAll() }));

  return app;
}
