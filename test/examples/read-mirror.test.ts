// The README's "Reading the mirror from your backend" example, against a replica filled from the sandbox.
import { spawn } from "node:child_process";
import path from "node:path";
import { runBackfill, runCatchup } from "@loops-sync/catchup";
import { createLogger } from "@loops-sync/config";
import type { LoopsClient } from "@loops-sync/loops-client";
import type { OrderInput } from "@loops-sync/replica";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { type Database, kyselyOver } from "@loops-sync/schema";
import { createWorkerMetrics } from "@loops-sync/worker";
import { createOrderApplier } from "@loops-sync/worker/orders/order-applier";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  merchantFreshness,
  readOrder,
  todaysOrdersPerLocation,
} from "../../examples/read-mirror/read-mirror.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { makeOrders, sandboxClient } from "../support/sandbox-orders.ts";

const EXAMPLE = path.resolve(import.meta.dirname, "../../examples/read-mirror/read-mirror.ts");
const localDate = (at: string | Date, timeZone: string) =>
  new Intl.DateTimeFormat("en-CA", { timeZone }).format(new Date(at));

function runExample(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [EXAMPLE, ...args], {
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, out }));
  });
}

describe("examples/read-mirror", () => {
  let db: TestDatabase;
  let sandbox: Sandbox;
  let client: LoopsClient;
  let k: Kysely<Database>;
  const merchant = "mer_demo_1";
  let changed: string;
  let changedBy: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0 });
    client = sandboxClient(sandbox);
    makeOrders(sandbox, merchant, 24);
    // Catch-up stores the merchant's events (sync_health has something to say); the backfill mirrors orders.
    await runCatchup({ sql: db.sql, client, merchantId: merchant });
    await runBackfill({ sql: db.sql, client, merchantId: merchant });
    k = kyselyOver<Database>(db.sql);
    // One order changes after the backfill: catch-up stores its event and the worker's applier applies it.
    changed = sandbox.truth
      .orders(merchant)
      .find((o) => o.status_history.length > 2 && o.items.some((i) => (i.modifiers ?? []).length > 0))!.id;
    sandbox.advanceOrder(changed);
    await runCatchup({ sql: db.sql, client, merchantId: merchant });
    const event = await k
      .selectFrom("sync.events")
      .select("id")
      .where("order_id", "=", changed)
      .orderBy("created_at", "desc")
      .executeTakeFirstOrThrow();
    changedBy = event.id;
    const applier = createOrderApplier({
      sql: db.sql,
      metrics: createWorkerMetrics(),
      logger: createLogger({ name: "test", level: "silent" }),
    });
    const fresh = await client.forMerchant(merchant).orders.get(changed);
    await applier.apply(fresh as unknown as OrderInput, [changedBy]);
  });
  afterAll(async () => {
    await sandbox?.close();
    await db?.drop();
  });

  it("reads an order with its items, modifiers, status history and provenance", async () => {
    const truth = sandbox.truth.orders(merchant).find((o) => o.id === changed)!;
    const order = await readOrder(k, truth.id);
    expect(order).toBeDefined();
    expect(order!.version).toBe(truth.version);
    expect(order!.created_at).toEqual(new Date(truth.created_at));
    expect(order!.items.map((i) => [i.name_en, i.quantity])).toEqual(
      truth.items.map((i) => [i.name.en, i.quantity]),
    );
    expect(order!.items.map((i) => i.modifiers.map((m) => m.name_en))).toEqual(
      truth.items.map((i) => (i.modifiers ?? []).map((m) => m.name.en)),
    );
    expect(order!.items.flatMap((i) => i.modifiers).length).toBeGreaterThan(0);
    expect(order!.status_history.map((h) => [h.status, new Date(h.at).toISOString()])).toEqual(
      truth.status_history.map((h) => [h.status, new Date(h.at).toISOString()]),
    );
    // The row names the event whose fetch last changed it; an order only the backfill wrote names none.
    expect(order).toMatchObject({ last_change_event_id: changedBy, last_change_source: "catchup" });
    const other = sandbox.truth.orders(merchant).find((o) => o.id !== changed)!;
    expect(await readOrder(k, other.id)).toMatchObject({
      last_change_event_id: null,
      last_change_source: "backfill",
    });
  });

  it("counts today's orders per location in each location's local day, from daily_sales", async () => {
    const rows = await todaysOrdersPerLocation(k, merchant);
    const expected = new Map<string, { orders: number; sales: number; total: number }>();
    for (const o of sandbox.truth.orders(merchant)) {
      const zone = rows.find((r) => r.location_id === o.location_id)?.timezone ?? "Asia/Riyadh";
      if (localDate(o.created_at, zone) !== localDate(new Date(), zone)) continue;
      const e = expected.get(o.location_id) ?? { orders: 0, sales: 0, total: 0 };
      const sale = o.status !== "rejected" && o.status !== "cancelled";
      expected.set(o.location_id, {
        orders: e.orders + 1,
        sales: e.sales + (sale ? 1 : 0),
        total: e.total + (sale ? o.totals.total.amount : 0),
      });
    }
    expect(expected.size).toBeGreaterThan(0);
    expect(
      Object.fromEntries(
        rows.map((r) => [r.location_id, { orders: r.orders, sales: r.sales_orders, total: r.total_amount }]),
      ),
    ).toEqual(Object.fromEntries(expected));
  });

  it("tells a merchant's freshness from sync_health", async () => {
    const freshness = await merchantFreshness(k, merchant);
    const pending = await k
      .selectFrom("sync.events")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("merchant_id", "=", merchant)
      .where("outcome", "=", "pending")
      .executeTakeFirstOrThrow();
    expect(freshness).toMatchObject({
      merchant_status: "active",
      last_catchup_status: "ok",
      pending_events: pending.n,
      failed_events: 0,
    });
    expect(freshness!.last_catchup_finished_at).toBeInstanceOf(Date);
    expect(await merchantFreshness(k, "mer_unknown")).toBeUndefined();
  });

  it("runs as a program against the database and prints the same answers", async () => {
    const truth = sandbox.truth.orders(merchant)[0]!;
    const { code, out } = await runExample([merchant, truth.id], { DATABASE_URL: db.url });
    expect(code).toBe(0);
    const [order, today, freshness] = out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(order.order).toMatchObject({ id: truth.id, version: truth.version, merchant_id: merchant });
    expect(today.today).toEqual(JSON.parse(JSON.stringify(await todaysOrdersPerLocation(k, merchant))));
    expect(freshness.freshness.merchant_status).toBe("active");
    expect((await runExample([], { DATABASE_URL: db.url })).code).toBe(2);
  });
});
