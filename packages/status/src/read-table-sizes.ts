import type { Sql, TransactionSql } from "@loops-sync/db";

/** One table's footprint, from the catalog (no scan): what retention keeps in check. */
export interface TableSize {
  /** schema.table */
  table: string;
  /** The planner's row estimate (pg_class.reltuples, refreshed by autovacuum/ANALYZE); null before any. */
  estimatedRows: number | null;
  /** Heap, indexes and TOAST, in bytes (pg_total_relation_size). */
  totalBytes: number;
}

/** The tables that grow with traffic, largest first. */
const TABLES = [
  "sync.events",
  "sync.order_refresh",
  "graphile_worker._private_jobs",
  "replica.orders",
  "replica.order_items",
  "replica.order_status_history",
  "replica.changes",
] as const;

/** Sizes of the tables that grow with traffic, largest first (missing tables are left out). */
export async function readTableSizes(sql: Sql | TransactionSql): Promise<TableSize[]> {
  const rows = await sql<{ table: string; rows: number; bytes: string }[]>`
    select t.name as table, c.reltuples::float8 as rows, pg_total_relation_size(c.oid)::text as bytes
    from unnest(${[...TABLES]}::text[]) as t(name)
    join pg_class c on c.oid = to_regclass(t.name)
    order by pg_total_relation_size(c.oid) desc, t.name`;
  return rows.map((r) => ({
    table: r.table,
    estimatedRows: r.rows < 0 ? null : Math.round(r.rows),
    totalBytes: Number(r.bytes),
  }));
}
