// readChanges over a real database: the same rows as replica.read_changes, whatever the handle's parsers.
import { type Change, ChangesExpiredError, readChanges } from "@loops-sync/schema";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { orderChange, writeChanges } from "../support/write-changes.ts";

describe("readChanges", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await writeChanges(db.sql, [
      orderChange("ord_r1", 1, "placed", null),
      orderChange("ord_r2", 1, "placed", null),
    ]);
    await writeChanges(db.sql, [orderChange("ord_r1", 2, "accepted", "placed")]);
    await writeChanges(db.sql, [
      {
        resource: "channel",
        resourceId: "talabat",
        merchantId: null,
        operation: "insert",
        source: "catchup",
      },
    ]);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("returns the rows of replica.read_changes, typed, with numeric positions", async () => {
    const rows = await db.sql`select * from replica.read_changes(0, 1000)`;
    const changes = await readChanges(db.sql, { after: 0 });
    expect(changes).toEqual(rows.map((r) => ({ ...r })));
    expect(
      changes.map((c) => [c.resource_id, c.previous_status, c.status, c.previous_version, c.version]),
    ).toEqual([
      ["ord_r1", null, "placed", null, 1],
      ["ord_r2", null, "placed", null, 1],
      ["ord_r1", "placed", "accepted", 1, 2],
      ["talabat", null, null, null, null],
    ]);
    expect(changes[2]).toMatchObject({
      source: "webhook",
      event_id: "evt_ord_r1_2",
      merchant_id: "mer_feed_1",
    });
    expect(changes[3]!.merchant_id).toBeNull();
    expect(changes[0]!.changed_at).toBeInstanceOf(Date);
  });

  it("pages with after and limit", async () => {
    const all = await readChanges(db.sql, { after: 0 });
    const first = await readChanges(db.sql, { after: 0, limit: 2 });
    const rest = await readChanges(db.sql, { after: first.at(-1)!.position, limit: 2 });
    expect([...first, ...rest]).toEqual(all);
    expect(await readChanges(db.sql, { after: all.at(-1)!.position })).toEqual([]);
  });

  it("gives numbers over a handle that parses bigint as a string (postgres.js's default)", async () => {
    const plain = postgres(db.url, { max: 1, onnotice: () => {} });
    try {
      const changes: Change[] = await readChanges(plain, { after: 0 });
      expect(changes).toEqual(await readChanges(db.sql, { after: 0 }));
      expect(typeof changes[0]!.position).toBe("number");
    } finally {
      await plain.end();
    }
  });

  it("filters by resources and merchants in the database", async () => {
    const orders = await readChanges(db.sql, { after: 0, resources: ["order"] });
    expect(orders.map((c) => c.resource_id)).toEqual(["ord_r1", "ord_r2", "ord_r1"]);
    const channels = await readChanges(db.sql, { after: 0, resources: ["channel", "location"] });
    expect(channels.map((c) => c.resource_id)).toEqual(["talabat"]);
    expect(await readChanges(db.sql, { after: 0, merchantIds: ["mer_nobody"] })).toEqual([]);
    const mine = await readChanges(db.sql, { after: 0, merchantIds: ["mer_feed_1"], limit: 2 });
    expect(mine.map((c) => c.resource_id)).toEqual(["ord_r1", "ord_r2"]);
    await expect(readChanges(db.sql, { after: 0, resources: [] })).rejects.toThrow(
      /resources must be omitted/,
    );
    await expect(readChanges(db.sql, { after: 0, resources: ["orders" as "order"] })).rejects.toThrow(
      RangeError,
    );
    await expect(readChanges(db.sql, { after: 0, merchantIds: [""] })).rejects.toThrow(/merchantIds/);
  });

  it("refuses a bad cursor or limit before asking Postgres", async () => {
    await expect(readChanges(db.sql, { after: -1 })).rejects.toThrow(/after must be a whole number from 0/);
    await expect(readChanges(db.sql, { after: 1.5 })).rejects.toThrow(RangeError);
    await expect(readChanges(db.sql, { after: 0, limit: 0 })).rejects.toThrow(
      /limit must be a whole number from 1 to 10000/,
    );
  });

  it("throws ChangesExpiredError (code changes_expired) for a cursor older than what prune removed", async () => {
    const all = await readChanges(db.sql, { after: 0 });
    const pruned = all[1]!.position;
    await db.sql`update replica.change_feed_state set pruned_through = ${pruned}`;
    try {
      const error = await readChanges(db.sql, { after: pruned - 1 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ChangesExpiredError);
      expect(error).toMatchObject({ code: "changes_expired", prunedThrough: pruned, after: pruned - 1 });
      expect((error as Error).message).toMatch(/^changes_expired: .*read on after position/);
      expect(await readChanges(db.sql, { after: pruned })).toEqual(all.slice(2));
    } finally {
      await db.sql`update replica.change_feed_state set pruned_through = 0`;
    }
  });
});
