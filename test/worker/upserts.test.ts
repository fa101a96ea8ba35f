import { upsertJob, upsertMenu } from "@loops-sync/worker/mirror/upsert-job";
import { replaceMerchantLocations } from "@loops-sync/worker/mirror/upsert-locations";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

const location = (id: string, updatedAt: string, status = "open") => ({
  id,
  merchant_id: "mer_u",
  brand_id: "brd_u",
  name: { en: `Branch ${id}`, ar: `فرع ${id}` },
  status,
  timezone: "Asia/Riyadh",
  address: { line1: null, city: "Riyadh", country: "SA", latitude: 24.7, longitude: 46.6 },
  updated_at: updatedAt,
});
const connection = (id: string, locationId: string) => ({
  id,
  location_id: locationId,
  channel: "jahez",
  status: "active",
  updated_at: "2026-11-22T10:00:00Z",
});

describe("resource upserts", () => {
  it("replaces a merchant's locations from a complete listing, dropping what it no longer lists", async () => {
    const first = {
      locations: [location("loc_u1", "2026-11-22T10:00:00Z"), location("loc_u2", "2026-11-22T10:00:00Z")],
      channelConnections: [connection("chc_u1", "loc_u1"), connection("chc_u2", "loc_u2")],
    };
    const created = await replaceMerchantLocations(db.sql, "mer_u", first);
    expect(created.map((c) => [c.resource, c.resourceId, c.operation])).toEqual([
      ["location", "loc_u1", "insert"],
      ["location", "loc_u2", "insert"],
      ["channel_connection", "chc_u1", "insert"],
      ["channel_connection", "chc_u2", "insert"],
    ]);
    // The same listing again is no change at all.
    expect(await replaceMerchantLocations(db.sql, "mer_u", first)).toEqual([]);
    const second = await replaceMerchantLocations(db.sql, "mer_u", {
      locations: [location("loc_u1", "2026-11-22T11:00:00Z", "paused")],
      channelConnections: [connection("chc_u1", "loc_u1")],
    });
    expect(second.map((c) => [c.resource, c.resourceId, c.operation, c.previousStatus, c.status])).toEqual([
      ["location", "loc_u1", "update", "open", "paused"],
      ["location", "loc_u2", "delete", "open", null],
      ["channel_connection", "chc_u2", "delete", "active", null],
    ]);
    const rows = await db.sql`select id, status, city, timezone from replica.locations order by id`;
    expect(rows).toEqual([{ id: "loc_u1", status: "paused", city: "Riyadh", timezone: "Asia/Riyadh" }]);
    const chc = await db.sql`select id, merchant_id from replica.channel_connections`;
    expect(chc).toEqual([{ id: "chc_u1", merchant_id: "mer_u" }]);
  });

  it("does not let an older listing undo a newer location", async () => {
    await replaceMerchantLocations(db.sql, "mer_u", {
      locations: [location("loc_u1", "2026-11-22T09:00:00Z", "open")],
      channelConnections: [],
    });
    const [row] = await db.sql`select status from replica.locations where id = 'loc_u1'`;
    expect(row).toEqual({ status: "paused" });
  });

  it("writes one merchant's listings one at a time; one that started before the last written writes nothing", async () => {
    await db.sql`insert into sync.merchants (id, learned_from, status) values ('mer_s', 'config', 'active')`;
    const at = (iso: string) => new Date(iso);
    const loc = (id: string) => ({ ...location(id, "2026-11-22T10:00:00Z"), merchant_id: "mer_s" });
    // Go-live listed at 10:05 and holds its transaction open; a reconcile that listed at 10:00, before the
    // new location existed, tries to write meanwhile.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let goLiveWrote!: () => void;
    const wrote = new Promise<void>((resolve) => {
      goLiveWrote = resolve;
    });
    const goLive = db.sql.begin(async (tx) => {
      await replaceMerchantLocations(tx, "mer_s", {
        locations: [loc("loc_s1"), loc("loc_s2")],
        channelConnections: [],
        listedAt: at("2026-11-22T10:05:00Z"),
      });
      goLiveWrote();
      await held;
    });
    await wrote;
    const reconcile = replaceMerchantLocations(db.sql, "mer_s", {
      locations: [loc("loc_s1")],
      channelConnections: [],
      listedAt: at("2026-11-22T10:00:00Z"),
    });
    release();
    await goLive;
    expect(await reconcile).toEqual([]);
    const rows = await db.sql`select id from replica.locations where merchant_id = 'mer_s' order by id`;
    expect(rows).toEqual([{ id: "loc_s1" }, { id: "loc_s2" }]);
    // A listing that started later still writes, deletions included.
    const later = await replaceMerchantLocations(db.sql, "mer_s", {
      locations: [loc("loc_s2")],
      channelConnections: [],
      listedAt: at("2026-11-22T10:10:00Z"),
    });
    expect(later).toMatchObject([{ resourceId: "loc_s1", operation: "delete" }]);
  });

  it("never moves a finished job back to running", async () => {
    const job = { id: "job_u1", type: "menu_import", brand_id: "brd_u", created_at: "2026-11-22T10:00:00Z" };
    expect(await upsertJob(db.sql, "mer_u", { ...job, status: "running" })).toMatchObject([
      { operation: "insert", status: "running", previousStatus: null },
    ]);
    expect(await upsertJob(db.sql, "mer_u", { ...job, status: "succeeded" })).toMatchObject([
      { operation: "update", status: "succeeded", previousStatus: "running" },
    ]);
    expect(await upsertJob(db.sql, "mer_u", { ...job, status: "succeeded" })).toEqual([]);
    expect(await upsertJob(db.sql, "mer_u", { ...job, status: "running" })).toEqual([]);
    const [row] = await db.sql`select status from replica.jobs where id = 'job_u1'`;
    expect(row).toEqual({ status: "succeeded" });
  });

  it("keeps the newest menu version", async () => {
    const menu = (version: number) => ({
      brand_id: "brd_u",
      version,
      updated_at: "2026-11-22T10:00:00Z",
      products: [],
      categories: [],
    });
    expect(await upsertMenu(db.sql, "mer_u", menu(2))).toMatchObject([
      { resource: "menu", resourceId: "brd_u", operation: "insert", version: 2, previousVersion: null },
    ]);
    expect(await upsertMenu(db.sql, "mer_u", menu(1))).toEqual([]);
    expect(await upsertMenu(db.sql, "mer_u", menu(2))).toEqual([]);
    const [row] = await db.sql`select version from replica.menus where brand_id = 'brd_u'`;
    expect(row).toEqual({ version: 2 });
  });
});
