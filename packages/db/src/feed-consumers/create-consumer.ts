import type { Sql } from "../connection/connect.ts";
import type { ConsumerFilter } from "./feed-consumers.ts";

export interface CreateConsumerOptions extends ConsumerFilter {
  /** Start after this position: null (default) the head, 0 the oldest kept change. */
  after?: number | null;
}

/**
 * `replica.create_consumer`: true when created, false when it exists with the same filter (instances that
 * each create it at start share it). Another filter, a bad name or position: the function's error (42710,
 * 22023, LS410), for the caller to word.
 */
export async function createConsumer(
  sql: Sql,
  name: string,
  { resources = null, merchantIds = null, after = null }: CreateConsumerOptions = {},
): Promise<boolean> {
  const [row] = await sql<{ created: boolean }[]>`
    select replica.create_consumer(${name}, ${resources as string[] | null}::text[],
                                   ${merchantIds as string[] | null}::text[], ${after}::bigint) as created`;
  return row!.created;
}
