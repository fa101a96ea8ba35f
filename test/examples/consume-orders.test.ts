// The three-instance backend example as programs against a real database: three processes start at once
// while orders are applied as the worker applies them; the snapshot plus the consumer's changes give every
// order its final status, each change counted once across the instances.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { recordChanges, type Sql } from "@loops-sync/db";
import { applyOrdersIfNewer, orderChanges } from "@loops-sync/replica";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { makeOrder } from "../support/make-order.ts";

const EXAMPLE = path.resolve(import.meta.dirname, "../../examples/consume-orders/consume-orders.ts");
const ORDERS = 6;

async function apply(sql: Sql, id: string, version: number): Promise<void> {
  await sql.begin(async (tx) => {
    const applied = await applyOrdersIfNewer(tx, [makeOrder({ id, version, merchantId: "mer_ex" })], {
      source: "catchup",
    });
    await recordChanges(tx, orderChanges(applied, "catchup"));
  });
}

describe("examples/consume-orders", () => {
  let db: TestDatabase;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    for (const child of children) child.kill("SIGKILL");
    await db?.drop();
  });

  it("loads the mirror once, then three instances share the changes: every order current, nothing twice", async () => {
    // Orders that exist before the backend starts come from the snapshot.
    for (let i = 0; i < ORDERS; i++) await apply(db.sql, `ord_ex_${i}`, 1);
    const stderr: string[] = [];
    const exits: Promise<number | null>[] = [];
    for (let n = 0; n < 3; n++) {
      const child = spawn(process.execPath, [EXAMPLE], {
        env: { PATH: process.env.PATH ?? "", DATABASE_URL: db.url },
        stdio: ["ignore", "ignore", "pipe"],
      });
      children.push(child);
      child.stderr!.on("data", (d: Buffer) => stderr.push(d.toString()));
      exits.push(new Promise((resolve) => child.once("close", resolve)));
    }
    // While they start and after: versions 2 and 3 of each order.
    for (let version = 2; version <= 3; version++) {
      for (let i = 0; i < ORDERS; i++) await apply(db.sql, `ord_ex_${i}`, version);
    }
    const expected = await db.sql<{ order_id: string; status: string; total_amount: number | null }[]>`
      select id as order_id, status, total_amount from replica.orders order by id`;
    const totals = () =>
      db.sql<{ order_id: string; status: string; total_amount: number | null; changes: number }[]>`
        select order_id, status, total_amount, changes from public.order_totals order by order_id`;
    await waitFor(
      async () => {
        const [exists] = await db.sql`select to_regclass('public.order_totals') as t`;
        if (!exists?.t) return false;
        const rows = await totals();
        return JSON.stringify(rows.map(({ changes: _, ...r }) => r)) === JSON.stringify(expected);
      },
      { timeoutMs: 90_000, what: `every order's final status in order_totals (stderr: ${stderr.join("")})` },
    );
    await waitFor(() => (stderr.join("").match(/consuming order-totals/g) ?? []).length === 3, {
      timeoutMs: 60_000,
      what: `all three instances consuming (stderr: ${stderr.join("")})`,
    });
    for (const child of children) child.kill("SIGTERM");
    expect(await Promise.all(exits)).toEqual([0, 0, 0]);
    // One instance loaded the snapshot; each change after it was counted exactly once, by some instance.
    const loaded = stderr.join("").match(/loaded (\d+) orders as of position (\d+)/g) ?? [];
    expect(loaded).toHaveLength(1);
    const at = Number(/position (\d+)/.exec(loaded[0]!)![1]);
    const [since] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from replica.changes where resource = 'order' and position > ${at}`;
    const rows = await totals();
    expect(rows.reduce((sum, r) => sum + r.changes, 0)).toBe(since!.n);
    const [lag] = await db.sql<{ pending: string }[]>`select pending::text from sync.consumer_lag()`;
    expect(lag!.pending).toBe("0");
  }, 180_000);
});
