// The refresh tasks of extra resources against the sandbox, with a real worker: a brand or merchant event of a
// merchant that did not grant brands:read / merchants:read sets the resource aside (no pause), the job
// succeeds, its events are settled failed saying why, the next one makes no call, and orders still flow.

import { type EventEnvelope, storeEventsAndEnqueue } from "@loops-sync/db";
import { ALL_SCOPES } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { makeEvent } from "../support/webhook-fixtures.ts";
import { APPLICATION_ID, createHarness, type Harness, settled } from "../support/worker-harness.ts";

const MERCHANT = "mer_demo_1";
const BRAND = "brd_demo_1";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  const granted = await fetch(`${h.sandbox.url}/admin/applications/${APPLICATION_ID}/scopes`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      merchant_id: MERCHANT,
      scopes: ALL_SCOPES.filter((s) => s !== "brands:read" && s !== "merchants:read"),
    }),
  });
  expect(granted.status).toBe(200);
  await h.worker();
});
afterAll(async () => {
  await h?.close();
});

/** A web-app event of MERCHANT (no location), as the receiver stores it. */
const event = (id: string, type: string, data: Record<string, unknown>) =>
  makeEvent({
    id,
    type,
    merchant_id: MERCHANT,
    location_id: null,
    origin: { type: "web_app", application_id: null },
    data,
  } as unknown as Partial<EventEnvelope>);

const store = (events: EventEnvelope[]) =>
  h.db.sql.begin((tx) =>
    storeEventsAndEnqueue(tx, events, { source: "webhook", applicationId: APPLICATION_ID }),
  );
const count = async (query: string) => (await h.db.sql.unsafe<{ n: number }[]>(query))[0]!.n;
const jobsLeft = () =>
  count(
    "select count(*)::int as n from graphile_worker.jobs where task_identifier in ('refresh_brand', 'refresh_merchant')",
  );

describe("refresh tasks of a set-aside resource", () => {
  it("set brands and the merchant aside, succeed, settle their events failed, and call no more", {
    timeout: 60_000,
  }, async () => {
    await store([
      event("evt_brand_1", "brand.updated", { brand_id: BRAND }),
      event("evt_merchant_1", "merchant.updated", { id: MERCHANT }),
    ]);
    await waitFor(() => settled(h.db, ["evt_brand_1", "evt_merchant_1"]), { what: "the events settled" });
    await waitFor(async () => (await jobsLeft()) === 0, { what: "the refresh jobs to finish" });
    const refusals = await h.db.sql`
      select scope, merchant_id, resource, code from sync.resource_refusals order by resource`;
    expect(refusals).toEqual([
      { scope: "merchant", merchant_id: MERCHANT, resource: "brands", code: "scope_not_granted" },
      { scope: "merchant", merchant_id: MERCHANT, resource: "merchant", code: "scope_not_granted" },
    ]);
    expect(await count("select count(*)::int as n from sync.upstream_pauses")).toBe(0);
    const events = await h.db.sql<{ id: string; outcome: string; error: string | null }[]>`
      select id, outcome, error from sync.events where id in ('evt_brand_1', 'evt_merchant_1') order by id`;
    expect(events[0]).toMatchObject({ id: "evt_brand_1", outcome: "failed" });
    expect(events[0]!.error).toMatch(/Loops refused the scope for brands \(set aside\)/);
    // The merchant's profile was set aside, its connection read and stored all the same.
    expect(events[1]).toMatchObject({ id: "evt_merchant_1", outcome: "applied" });
    expect(h.calls("GET /brands/{brand_id}")).toBe(1);
    expect(h.calls("GET /merchant")).toBe(1);
    expect(h.calls("GET /connection")).toBeGreaterThanOrEqual(1);

    // The next brand and merchant events make no call for what is set aside.
    await store([
      event("evt_brand_2", "brand.updated", { brand_id: BRAND }),
      event("evt_merchant_2", "merchant.updated", { id: MERCHANT }),
    ]);
    await waitFor(() => settled(h.db, ["evt_brand_2", "evt_merchant_2"]), {
      what: "the next events settled",
    });
    await waitFor(async () => (await jobsLeft()) === 0, { what: "the next refresh jobs to finish" });
    expect(h.calls("GET /brands/{brand_id}")).toBe(1);
    expect(h.calls("GET /merchant")).toBe(1);

    // Orders of that merchant still flow.
    const order = h.sandbox.createOrder({ merchantId: MERCHANT });
    const ids = await h.ingest((e) => e.type.startsWith("order.") && e.merchant_id === MERCHANT);
    await waitFor(() => settled(h.db, ids), { what: "the order events applied" });
    expect(await count(`select count(*)::int as n from replica.orders where id = '${order.id}'`)).toBe(1);
    expect(await count("select count(*)::int as n from sync.upstream_pauses")).toBe(0);
  });
});
