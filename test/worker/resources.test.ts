import { type EventEnvelope, storeEventsAndEnqueue } from "@loops-sync/db";
import type { MenuImportParams } from "@loops-sync/loops-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { APPLICATION_ID, createHarness, type Harness, outcomes, settled } from "../support/worker-harness.ts";

const MERCHANT = "mer_demo_1";
let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  await h.worker({ merchantIds: [MERCHANT], refreshResourcesAtStart: true });
});
afterAll(async () => {
  await h?.close();
});

const count = async (table: string, merchantId?: string) => {
  const where = merchantId ? h.db.sql`where merchant_id = ${merchantId}` : h.db.sql``;
  const [row] = await h.db.sql`select count(*)::int as n from ${h.db.sql(table)} ${where}`;
  return row!.n as number;
};

const menu: MenuImportParams = {
  categories: [{ external_ref: "cat-grill", name: { en: "Grill", ar: "مشويات" } }],
  products: [
    {
      external_ref: "p-kebab",
      category_external_ref: "cat-grill",
      name: { en: "Kebab", ar: "كباب" },
      price: { amount: 3500, currency: "SAR" },
    },
  ],
};

describe("worker: merchants, locations, channels, jobs and menus", () => {
  it("refreshes the configured merchant's locations, channel connections, channels and profile at start", async () => {
    const api = h.client.forMerchant(MERCHANT);
    const locations = (await api.locations.list()).data;
    await waitFor(
      async () => {
        return (
          (await count("replica.locations", MERCHANT)) === locations.length &&
          (await count("replica.merchants")) === 1 &&
          (await count("replica.connections")) === 1 &&
          (await count("replica.channels")) > 0
        );
      },
      { what: "locations and profile stored" },
    );
    const connections = (
      await Promise.all(locations.map((l) => api.locations.channelConnections(l.id)))
    ).flat();
    await waitFor(async () => (await count("replica.channel_connections", MERCHANT)) === connections.length, {
      what: "channel connections stored",
    });
    const [olaya] = await h.db
      .sql`select name_en, name_ar, timezone, status from replica.locations where id = 'loc_demo_1a'`;
    const truth = locations.find((l) => l.id === "loc_demo_1a")!;
    expect(olaya).toEqual({
      name_en: truth.name.en,
      name_ar: truth.name.ar,
      timezone: truth.timezone,
      status: truth.status,
    });
    const [merchant] = await h.db.sql`select name_en, status from replica.merchants where id = ${MERCHANT}`;
    expect(merchant).toEqual({ name_en: "Najd Grill", status: (await api.merchant.get()).status });
    expect(await count("replica.channels")).toBe((await api.channels.list()).length);
  });

  it("refreshes locations when an event names one the replica lacks", async () => {
    await h.db.sql`delete from replica.locations where id = 'loc_demo_1b'`;
    await h.db.sql`delete from replica.channel_connections where location_id = 'loc_demo_1b'`;
    const order = h.sandbox.createOrder({ merchantId: MERCHANT, locationId: "loc_demo_1b" });
    const ids = await h.ingest((e: EventEnvelope) => e.data.order_id === order.id);
    await waitFor(
      async () => {
        const [row] = await h.db
          .sql`select count(*)::int as n from replica.locations where id = 'loc_demo_1b'`;
        return row!.n === 1 && (await settled(h.db, ids));
      },
      { what: "location back" },
    );
    const [connections] = await h.db.sql`
      select count(*)::int as n from replica.channel_connections where location_id = 'loc_demo_1b'`;
    expect(connections!.n).toBeGreaterThan(0);
  });

  it("stores the job of a job.completed event and, after a succeeded menu import, the brand's menu", async () => {
    const job = await h.client.forMerchant(MERCHANT).menus.import("brd_demo_1", menu);
    // pending → running → succeeded, one sandbox step each.
    h.sandbox.clock.advance(5000);
    h.sandbox.clock.advance(5000);
    const [completed] = h.sandbox.truth
      .events(MERCHANT)
      .filter((e) => e.type === "job.completed" && e.data.job_id === job.id) as unknown as EventEnvelope[];
    expect(completed).toBeDefined();
    // Imported here through our own client, so the real event is self-originated and ignored (spec rule 4);
    // the same import made from the merchant's web app is what the worker must follow.
    const fromWebApp = { ...completed!, origin: { type: "web_app", application_id: null } };
    await h.db.sql.begin((tx) =>
      storeEventsAndEnqueue(tx, [fromWebApp], { source: "webhook", applicationId: APPLICATION_ID }),
    );
    const ids = [fromWebApp.id];
    await waitFor(() => settled(h.db, ids), { what: "job.completed settled" });
    expect(await outcomes(h.db, ids)).toEqual({ [ids[0]!]: "applied" });
    const [stored] = await h.db
      .sql`select type, status, brand_id, merchant_id from replica.jobs where id = ${job.id}`;
    expect(stored).toEqual({
      type: "menu_import",
      status: "succeeded",
      brand_id: "brd_demo_1",
      merchant_id: MERCHANT,
    });
    const [storedMenu] = await h.db.sql`select version, raw from replica.menus where brand_id = 'brd_demo_1'`;
    // The sandbox seeds every brand with a first menu; this import is its second version.
    expect(storedMenu!.version).toBe(2);
    expect(storedMenu!.raw.products[0].external_ref).toBe("p-kebab");
    const products = await h.db.sql`
      select external_ref, menu_version from replica.menu_products where brand_id = 'brd_demo_1'`;
    expect(products).toEqual([{ external_ref: "p-kebab", menu_version: 2 }]);
  });

  it("refreshes the merchant on a business_profile event", async () => {
    await h.db.sql`delete from replica.merchants`;
    const [template] = h.sandbox.truth.events(MERCHANT) as unknown as EventEnvelope[];
    const approved = {
      ...template!,
      id: "evt_profile_approved",
      type: "business_profile.approved",
      location_id: null,
      data: {},
    };
    await h.db.sql.begin((tx) =>
      storeEventsAndEnqueue(tx, [approved], { source: "webhook", applicationId: undefined }),
    );
    await waitFor(() => settled(h.db, [approved.id]), { what: "profile event settled" });
    expect(await outcomes(h.db, [approved.id])).toEqual({ [approved.id]: "applied" });
    expect(await count("replica.merchants")).toBe(1);
  });
});
