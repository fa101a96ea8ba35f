import type { Sql } from "../connection/connect.ts";

/** `replica.drop_consumer`: drops the consumer and its leases; false when there was none of that name. */
export async function dropConsumer(sql: Sql, name: string): Promise<boolean> {
  const [row] = await sql<{ dropped: boolean }[]>`select replica.drop_consumer(${name}) as dropped`;
  return row!.dropped;
}
