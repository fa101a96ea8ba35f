import { randomBytes } from "node:crypto";
import type { Sql } from "@loops-sync/db";

export interface RawInsertOptions {
  sql: Sql;
  /** Rows per INSERT statement (each its own durable transaction). */
  batchSize: number;
  /** Statements in flight at once (one connection each). */
  concurrency: number;
  seconds: number;
}

/**
 * The storage ceiling: multi-row INSERTs of the same event rows into sync.events, committed durably, with
 * no HTTP, signature check, JSON parsing or job enqueue. Returns rows per second.
 */
export async function measureRawInserts({
  sql,
  batchSize,
  concurrency,
  seconds,
}: RawInsertOptions): Promise<{ perSecond: number; rows: number }> {
  const run = randomBytes(4).toString("hex");
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  let rows = 0;
  let n = 0;
  const makeRow = () => {
    n++;
    const id = `evt_raw_${run}_${n}`;
    const createdAt = new Date().toISOString();
    const payload = {
      id,
      type: "order.status_changed",
      created_at: createdAt,
      merchant_id: `mer_load_${n % 20}`,
      location_id: "loc_load",
      connection_id: "con_bench",
      origin: { type: "channel", application_id: null },
      data: { order_id: `ord_raw_${run}_${n}`, channel_ref: `R-${n}`, status: "accepted", version: 2 },
    };
    return {
      id,
      type: payload.type,
      merchant_id: payload.merchant_id,
      location_id: payload.location_id,
      connection_id: payload.connection_id,
      origin_type: "channel",
      origin_application_id: null,
      created_at: createdAt,
      source: "webhook",
      payload: JSON.stringify(payload),
      outcome: "pending",
    };
  };
  const columns = [
    "id",
    "type",
    "merchant_id",
    "location_id",
    "connection_id",
    "origin_type",
    "origin_application_id",
    "created_at",
    "source",
    "payload",
    "outcome",
  ] as const;
  async function loop() {
    while (performance.now() < deadline) {
      const batch = Array.from({ length: batchSize }, makeRow);
      // payload is jsonb: the text is cast server-side, as the receiver's statement does.
      await sql.unsafe(
        `insert into sync.events (${columns.join(", ")}) values ${batch
          .map(
            (_, i) =>
              `(${columns.map((c, j) => `$${i * columns.length + j + 1}${c === "payload" ? "::jsonb" : c === "created_at" ? "::timestamptz" : ""}`).join(", ")})`,
          )
          .join(", ")}`,
        batch.flatMap((r) => columns.map((c) => r[c])),
        { prepare: true },
      );
      rows += batch.length;
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop));
  return { perSecond: rows / ((performance.now() - started) / 1000), rows };
}
