import { createLogger } from "@loops-sync/config";
import { createWorkerMetrics } from "@loops-sync/worker";
import { createOrderApplier } from "@loops-sync/worker/orders/order-applier";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { makeOrder } from "../support/make-order.ts";

describe("order applier: orders naming a location the replica lacks", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.sql`
      insert into replica.locations (id, merchant_id, status, raw)
      values ('loc_known', 'mer_b', 'open', '{}')`;
  });
  afterAll(async () => {
    await db.drop();
  });

  const jobs = () =>
    db.sql<
      {
        key: string;
        payload: unknown;
        flags: Record<string, true>;
        max_attempts: number;
        run_at: string;
        delay_ms: number;
      }[]
    >`
      select j.key, j.payload, j.flags, j.max_attempts, j.run_at::text,
             (extract(epoch from (j.run_at - j.created_at)) * 1000)::float8 as delay_ms
      from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier = 'refresh_locations' order by j.key`;

  it("asks once per merchant for a refresh of its locations, in the commit that wrote the orders", async () => {
    const applier = createOrderApplier({
      sql: db.sql,
      metrics: createWorkerMetrics(),
      logger: createLogger({ name: "test", level: "silent" }),
    });
    // One commit is under way when the other three are handed in: those three share the next.
    await Promise.all([
      applier.apply(makeOrder({ id: "ord_l1", merchantId: "mer_a", locationId: "loc_new_a" }), []),
      applier.apply(makeOrder({ id: "ord_l2", merchantId: "mer_a", locationId: "loc_other_a" }), []),
      applier.apply(makeOrder({ id: "ord_l3", merchantId: "mer_b", locationId: "loc_known" }), []),
      applier.apply(makeOrder({ id: "ord_l4", merchantId: "mer_c", locationId: "loc_new_c" }), []),
    ]);
    const found = await jobs();
    expect(found.map((j) => j.key)).toEqual(["locations:mer_a", "locations:mer_c"]);
    expect(found[0]).toMatchObject({
      payload: { merchantId: "mer_a" },
      flags: { "merchant:mer_a": true },
      max_attempts: 12,
    });
    // Due a little later, so a burst of such orders asks once.
    expect(found[0]!.delay_ms).toBeGreaterThan(0);

    // A later order of the same merchant keeps the job (and its time) instead of adding another.
    await applier.apply(makeOrder({ id: "ord_l5", merchantId: "mer_a", locationId: "loc_new_a" }), []);
    const again = await jobs();
    expect(again.map((j) => j.key)).toEqual(["locations:mer_a", "locations:mer_c"]);
    expect(again[0]!.run_at).toBe(found[0]!.run_at);
  });
});
