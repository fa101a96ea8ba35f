// Reacting to new and changed orders from your backend: follow the change feed, print one line per order
// change with its status transition, and keep the cursor in a table of your own so a restart resumes where
// the last run stopped. Ctrl-C (or SIGTERM) stops it.
// Run: DATABASE_URL=postgres://… node examples/react-to-orders/react-to-orders.ts
import { type Change, followChanges, POSTGRES_TYPES } from "@loops-sync/schema";
import postgres from "postgres";

type Sql = postgres.Sql<{ bigint: number }>;

/** This consumer's name in the cursor table: several consumers may keep their own. */
export const CONSUMER = "react-to-orders";

/**
 * The cursor lives in your schema, not in loops-sync's: `public.feed_cursors`, one row per consumer, holding
 * the last position handled. `create … if not exists` makes the first run set it up.
 */
export async function loadCursor(sql: Sql, consumer = CONSUMER): Promise<number> {
  await sql`
    create table if not exists public.feed_cursors (
      consumer   text primary key,
      position   bigint not null,
      updated_at timestamptz not null default now()
    )`;
  const [row] = await sql<{ position: number }[]>`
    select position from public.feed_cursors where consumer = ${consumer}`;
  return row?.position ?? 0;
}

/** Records that every change up to `position` was handled. */
export async function saveCursor(sql: Sql, position: number, consumer = CONSUMER): Promise<void> {
  await sql`
    insert into public.feed_cursors (consumer, position) values (${consumer}, ${position})
    on conflict (consumer) do update set position = excluded.position, updated_at = now()`;
}

/** The line a kitchen screen would show for an order's change; undefined for other resources. */
export function describeOrderChange(change: Change): string | undefined {
  if (change.resource !== "order") return undefined;
  const order = `order ${change.resource_id} (${change.merchant_id})`;
  if (change.operation === "insert") return `new ${order}: ${change.status}`;
  if (change.operation === "delete") return `${order} removed`;
  if (change.previous_status !== change.status) {
    return `${order}: ${change.previous_status} → ${change.status}`;
  }
  return `${order} changed (version ${change.previous_version} → ${change.version}), still ${change.status}`;
}

/**
 * Follows the feed from the saved cursor until `signal` aborts. The line is printed before the cursor moves
 * past it: a crash in between prints that change again on restart (at least once). An effect that lives in
 * your database gets exactly once by moving the cursor in the same transaction.
 */
export async function reactToOrders(sql: Sql, signal: AbortSignal, print = console.log): Promise<void> {
  const after = await loadCursor(sql);
  console.error(`${CONSUMER}: following the change feed after position ${after}`);
  for await (const change of followChanges(sql, { after, signal })) {
    const line = describeOrderChange(change);
    if (line) print(line);
    await saveCursor(sql, change.position);
  }
}

if (import.meta.main) {
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.error("set DATABASE_URL to the loops-sync database");
    process.exit(2);
  }
  const sql = postgres(url, { max: 2, types: POSTGRES_TYPES, onnotice: () => {} });
  const stop = new AbortController();
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => stop.abort());
  try {
    await reactToOrders(sql, stop.signal);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
