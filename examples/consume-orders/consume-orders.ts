// A backend that runs several instances: load the mirror once (snapshotThenFollow), then let every instance
// consume one named consumer (consumeChanges). Each order change is handled by one instance, in order per
// order, and its effect (a row of your own) commits together with the acknowledgement: exactly once.
// Run as many as you like: DATABASE_URL=postgres://… node examples/consume-orders/consume-orders.ts
import { consumeChanges, POSTGRES_TYPES, snapshotThenFollow } from "@loops-sync/schema";
import postgres from "postgres";

type Sql = postgres.Sql<{ bigint: number }>;

/** The consumer every instance shares. */
export const CONSUMER = "order-totals";

/**
 * Your table, filled from one consistent snapshot of the mirror, and the consumer created at the snapshot's
 * position in the same transaction, so not one change is missed or counted twice. The instance that creates
 * the consumer loads the snapshot; every other start (or a concurrent one) finds it there and loads nothing.
 */
export async function setUp(sql: Sql): Promise<void> {
  await sql.begin(async (tx) => {
    // Instances starting together take turns: concurrent CREATE TABLE IF NOT EXISTS can fail on the catalog's
    // unique index (pg_type) instead of finding the table there.
    await tx`select pg_advisory_xact_lock(hashtext('examples/consume-orders'))`;
    await tx`
      create table if not exists public.order_totals (
        order_id text primary key, status text not null, total_amount bigint, changes integer not null default 0)`;
  });
  const { snapshot, after, changes } = await snapshotThenFollow(
    sql,
    (tx) => tx<{ id: string; status: string; total_amount: number | null }[]>`
      select id, status, total_amount from replica.orders`,
  );
  await changes.return();
  await sql.begin(async (tx) => {
    const [consumer] = await tx<{ created: boolean }[]>`
      select replica.create_consumer(${CONSUMER}, array['order'], null, ${after}) as created`;
    if (!consumer?.created) return;
    for (const o of snapshot) {
      await tx`insert into public.order_totals (order_id, status, total_amount)
               values (${o.id}, ${o.status}, ${o.total_amount})`;
    }
    console.error(`${CONSUMER}: loaded ${snapshot.length} orders as of position ${after}`);
  });
}

/** One instance: handles its share of the order changes until `signal` aborts. */
export async function consumeOrders(sql: Sql, signal: AbortSignal, name = "instance"): Promise<void> {
  console.error(`${name}: consuming ${CONSUMER}`);
  await consumeChanges(sql, { consumer: CONSUMER, signal }, async (change, tx) => {
    // Runs in the transaction that acknowledges the change: both commit, or neither.
    await tx`
      insert into public.order_totals (order_id, status, total_amount, changes)
      select o.id, o.status, o.total_amount, 1 from replica.orders o where o.id = ${change.resource_id}
      on conflict (order_id) do update
        set status = excluded.status, total_amount = excluded.total_amount,
            changes = public.order_totals.changes + 1`;
    console.error(`${name}: ${change.resource_id} ${change.previous_status ?? "new"} → ${change.status}`);
  });
}

if (import.meta.main) {
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.error("set DATABASE_URL to the loops-sync database");
    process.exit(2);
  }
  const sql = postgres(url, { max: 3, types: POSTGRES_TYPES, onnotice: () => {} });
  const stop = new AbortController();
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => stop.abort());
  try {
    await setUp(sql);
    await consumeOrders(sql, stop.signal, `pid ${process.pid}`);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
