// Catch-up against a misbehaving upstream: one order of a list page that the replica cannot store must be
// set aside with its reason, and the good orders of the same page stored (packages/catchup applyOrderPage
// promises exactly that), whatever is wrong with the bad one: a wrong schema, a negative version, or a NUL
// character that Postgres refuses in jsonb.

import { randomBytes } from "node:crypto";
// The root package does not list @loops-sync/catchup; test/catchup imports it the same way.
import { runCatchup } from "@loops-sync/catchup";
import { LoopsClient } from "@loops-sync/loops-client";
import { type Order, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareReplicaWithTruth } from "#testkit/compare-replica";
import { recordSecrets } from "#testkit/processes";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { type HostileUpstream, startHostileUpstream } from "../support/hostile-upstream.ts";

const RUN_ID = `catchup-upstream-${randomBytes(4).toString("hex")}`;
const CLIENT_SECRET = `catchup-upstream-secret-${randomBytes(12).toString("hex")}`;

describe("catch-up against a misbehaving upstream", () => {
  let db: TestDatabase;
  let upstream: HostileUpstream;
  let client: LoopsClient;
  let template: Order;
  let merchant = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    const sandbox = await startSandbox({ randomSeed: 11 });
    template = sandbox.createOrder({ merchantId: "mer_demo_1" });
    await sandbox.close();
    upstream = await startHostileUpstream({ clientSecret: CLIENT_SECRET });
    recordSecrets(RUN_ID, [CLIENT_SECRET]);
    client = new LoopsClient({
      apiUrl: upstream.apiUrl,
      authUrl: upstream.authUrl,
      clientId: "catchup-upstream",
      clientSecret: CLIENT_SECRET,
      retry: { maxAttempts: 1 },
    });
  });

  afterAll(async () => {
    await upstream?.close();
    await db?.drop();
  });

  async function catchUpPageWith(bad: (o: Order) => unknown) {
    merchant++;
    const merchantId = `mer_hostile_${merchant}`;
    const make = (n: number): Order => ({
      ...structuredClone(template),
      id: `ord_list_${merchant}_${n}`,
      merchant_id: merchantId,
      version: 3,
    });
    const good = [make(1), make(2)];
    const orders = [good[0]!, bad(make(3)), good[1]!];
    const events = orders.map((_order, i) => ({
      id: `evt_list_${merchant}_${i}`,
      type: "order.created",
      created_at: new Date().toISOString(),
      merchant_id: merchantId,
      location_id: template.location_id,
      connection_id: template.channel_connection_id,
      origin: { type: "channel", application_id: null },
      data: { order_id: `ord_list_${merchant}_${i + 1}`, channel_ref: "R", status: "placed", version: 3 },
    }));
    upstream.serveLists({ orders, events });
    const result = await runCatchup({ sql: db.sql, client, merchantId, applicationId: "app_loops_sync" });
    return { good, result, badId: `ord_list_${merchant}_3` };
  }

  it.each([
    ["a wrong schema", (o: Order) => ({ ...o, items: "three kebabs" })],
    ["a negative version", (o: Order) => ({ ...o, version: -1 })],
    ["a NUL character in a string", (o: Order) => ({ ...o, notes: "before\u0000after" })],
  ])("stores the good orders of a page holding one with %s, and not that one", async (_what, bad) => {
    const { good, badId, result } = await catchUpPageWith(bad);
    const run = result.merchants[0];
    expect(
      await compareReplicaWithTruth(db.sql, good, { exhaustive: false }),
      `good orders of the page (catch-up: ${run?.status}, ${run?.error ?? "no error"})`,
    ).toEqual([]);
    const [stored] = await db.sql`select id from replica.orders where id = ${badId}`;
    expect(stored).toBeUndefined();
  });
});
