import { connect, type Sql } from "@loops-sync/db";
import { LoopsError } from "@loops-sync/loops-client";
import { applyOrderIfNewer, applyOrdersIfNewer } from "@loops-sync/replica";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { makeOrder } from "../support/make-order.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

async function stored(sql: Sql, id: string) {
  const [order] =
    await sql`select version, status, total_amount, currency, raw from replica.orders where id = ${id}`;
  const [counts] = await sql`
    select (select count(*)::int from replica.order_items where order_id = ${id}) as items,
           (select count(*)::int from replica.order_item_modifiers where order_id = ${id}) as modifiers,
           (select count(*)::int from replica.order_status_history where order_id = ${id}) as history`;
  return { order, counts };
}

describe("applyOrderIfNewer", () => {
  it("stores a new order with typed columns, children and the raw JSON", async () => {
    const result = await applyOrderIfNewer(db.sql, makeOrder({ id: "ord_new", version: 2 }));
    expect(result).toEqual({
      id: "ord_new",
      changed: true,
      previousVersion: null,
      version: 2,
      merchantId: "mer_test",
      status: "accepted",
      previousStatus: null,
      eventId: null,
      source: null,
    });
    const { order, counts } = await stored(db.sql, "ord_new");
    expect(order).toMatchObject({ version: 2, status: "accepted", currency: "SAR" });
    const { totals } = makeOrder({ version: 2 }) as { totals: { total: { amount: number } } };
    expect(order!.total_amount).toBe(totals.total.amount);
    expect(order!.raw.future_field).toBe("kept in raw");
    expect(counts).toEqual({ items: 2, modifiers: 2, history: 2 });
    const [item] =
      await db.sql`select name_en, name_ar, unit_price_amount from replica.order_items where order_id = 'ord_new' and position = 1`;
    expect(item).toEqual({ name_en: "Item 1", name_ar: "صنف 1", unit_price_amount: 1001 });
  });

  it("leaves version 3 in place when version 2 arrives after it, children included", async () => {
    await applyOrderIfNewer(db.sql, makeOrder({ id: "ord_v3", version: 3 }));
    const late = await applyOrderIfNewer(db.sql, makeOrder({ id: "ord_v3", version: 2 }));
    expect(late).toMatchObject({ changed: false, previousVersion: 3, version: 3 });
    const { order, counts } = await stored(db.sql, "ord_v3");
    expect(order!.version).toBe(3);
    expect(order!.status).toBe("preparing");
    expect(counts).toEqual({ items: 3, modifiers: 3, history: 3 });
  });

  it("applies the same version once: a duplicate changes nothing", async () => {
    await applyOrderIfNewer(db.sql, makeOrder({ id: "ord_dup", version: 4 }));
    const [before] = await db.sql`select synced_at from replica.orders where id = 'ord_dup'`;
    const again = await applyOrderIfNewer(db.sql, makeOrder({ id: "ord_dup", version: 4 }));
    expect(again.changed).toBe(false);
    const [after] = await db.sql`select synced_at from replica.orders where id = 'ord_dup'`;
    expect(after!.synced_at).toEqual(before!.synced_at);
    expect((await stored(db.sql, "ord_dup")).counts).toEqual({ items: 4, modifiers: 4, history: 4 });
  });

  it("makes the children exactly the newer version's, rewriting only the rows that differ", async () => {
    const first = makeOrder({ id: "ord_children", version: 3 });
    (first.items as { modifiers: unknown[] }[])[2]!.modifiers.push({
      name: { en: "Extra", ar: "إضافي" },
      unit_price: { amount: 50, currency: "SAR" },
    });
    await applyOrderIfNewer(db.sql, first);
    const children = async () =>
      await db.sql`
        select 'item' as kind, position::text as at, name_en as value, xmin::text as xmin
        from replica.order_items where order_id = 'ord_children'
        union all
        select 'modifier', item_position || '.' || position, name_en || ' x' || quantity, xmin::text
        from replica.order_item_modifiers where order_id = 'ord_children'
        union all
        select 'history', position::text, status, xmin::text
        from replica.order_status_history where order_id = 'ord_children'
        order by 1, 2`;
    const before = await children();
    // Version 4: item 0 unchanged, item 1 renamed, item 2 gone (and its two modifiers), one more status.
    const next = makeOrder({ id: "ord_children", version: 4 });
    const items = (first.items as Record<string, unknown>[]).slice(0, 2).map((i) => structuredClone(i));
    (items[1]!.name as { en: string }).en = "Renamed";
    next.items = items;
    await applyOrderIfNewer(db.sql, next);
    const after = await children();
    expect(after.map(({ kind, at, value }) => `${kind} ${at} ${value}`)).toEqual([
      "history 0 placed",
      "history 1 accepted",
      "history 2 preparing",
      "history 3 ready",
      "item 0 Item 0",
      "item 1 Renamed",
      "modifier 0.0 Mod 0 x1",
      "modifier 1.0 Mod 1 x1",
    ]);
    const xmin = (rows: typeof before, kind: string, at: string) =>
      rows.find((r) => r.kind === kind && r.at === at)!.xmin;
    // Rows equal in both versions were not rewritten; the changed ones were.
    for (const [kind, at] of [
      ["item", "0"],
      ["modifier", "0.0"],
      ["modifier", "1.0"],
      ["history", "2"],
    ])
      expect(xmin(after, kind!, at!)).toBe(xmin(before, kind!, at!));
    expect(xmin(after, "item", "1")).not.toBe(xmin(before, "item", "1"));

    // Version 5 with no items and a null history: every child row goes.
    await applyOrderIfNewer(db.sql, {
      ...makeOrder({ id: "ord_children", version: 5 }),
      items: [],
      status_history: null,
    });
    expect(await children()).toEqual([]);
  });

  it("takes a batch (a list page), keeping the newest copy of a repeated id, inside the caller's transaction", async () => {
    const results = await db.sql.begin((tx) =>
      applyOrdersIfNewer(tx, [
        makeOrder({ id: "ord_b1", version: 1 }),
        makeOrder({ id: "ord_b2", version: 5 }),
        makeOrder({ id: "ord_b1", version: 3 }),
      ]),
    );
    expect(results.map((r) => [r.id, r.changed, r.version])).toEqual([
      ["ord_b1", true, 3],
      ["ord_b2", true, 5],
    ]);
    expect((await stored(db.sql, "ord_b1")).order!.version).toBe(3);
  });

  it("rolls back with the caller's transaction", async () => {
    await expect(
      db.sql.begin(async (tx) => {
        await applyOrderIfNewer(tx, makeOrder({ id: "ord_rollback", version: 1 }));
        throw new Error("caller gave up");
      }),
    ).rejects.toThrow("caller gave up");
    expect((await stored(db.sql, "ord_rollback")).order).toBeUndefined();
  });

  it("keeps an unknown status as it is", async () => {
    await applyOrderIfNewer(db.sql, makeOrder({ id: "ord_odd", version: 1, status: "teleported" }));
    expect((await stored(db.sql, "ord_odd")).order!.status).toBe("teleported");
  });

  it("refuses a malformed order with a typed error naming the field, writing nothing", async () => {
    const bad = { ...makeOrder({ id: "ord_bad", version: 1 }), version: -1 };
    await expect(applyOrderIfNewer(db.sql, bad)).rejects.toMatchObject({
      code: "invalid_order",
      field: "version",
    });
    const badItem = makeOrder({ id: "ord_bad", version: 1 });
    (badItem.items as { quantity: unknown }[])[0]!.quantity = "two";
    const error = await applyOrderIfNewer(db.sql, badItem).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoopsError);
    expect((error as LoopsError).field).toBe("items[0].quantity");
    expect((await stored(db.sql, "ord_bad")).order).toBeUndefined();
  });

  it("ends with the newest version when several connections race on the same orders", async () => {
    const pools = Array.from({ length: 4 }, () => connect(db.url, { max: 2 }));
    try {
      const versions = Array.from({ length: 24 }, (_, i) => i + 1).sort(() => Math.random() - 0.5);
      await Promise.all(
        versions.map((version, i) =>
          applyOrdersIfNewer(pools[i % pools.length]!, [
            makeOrder({ id: "ord_race_a", version }),
            makeOrder({ id: "ord_race_b", version: 25 - version }),
          ]),
        ),
      );
      for (const id of ["ord_race_a", "ord_race_b"]) {
        const { order, counts } = await stored(db.sql, id);
        expect(order!.version).toBe(24);
        expect(counts).toEqual({ items: 24, modifiers: 24, history: 6 });
      }
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });
});
