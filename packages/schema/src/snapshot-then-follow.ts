import type postgres from "postgres";
import { type FollowChangesOptions, followChanges } from "./follow-changes.ts";
import type { Change } from "./read-changes.ts";

export interface SnapshotThenFollow<T> {
  /** What `load` returned: the mirror as of `after`. */
  snapshot: T;
  /** The feed position the snapshot includes: every change at or below it is in it, none above. */
  after: number;
  /** The changes after the snapshot, as they commit ({@link followChanges} from `after`). */
  changes: AsyncGenerator<Change, void, undefined>;
}

/**
 * A consistent read of the mirror plus the position to follow from, so a new backend loads everything and then
 * streams without a gap or a double: `load(tx)` runs in a repeatable-read, read-only transaction whose
 * snapshot also fixes `after` (a mirrored row and its change commit together, and positions commit in order,
 * so the snapshot holds exactly the changes up to `after`). `changes` then follows from there; to hand them to
 * several instances instead, create a consumer with `after` (`replica.create_consumer(name, after => after)`).
 * `sql` must be a pool (`postgres(url)`).
 */
export async function snapshotThenFollow<T>(
  // biome-ignore lint/suspicious/noExplicitAny: any postgres.js pool, whatever its custom types
  sql: postgres.Sql<any>,
  // biome-ignore lint/suspicious/noExplicitAny: any postgres.js transaction
  load: (tx: postgres.TransactionSql<any>) => Promise<T>,
  options: Omit<FollowChangesOptions, "after"> = {},
): Promise<SnapshotThenFollow<T>> {
  if (typeof load !== "function") throw new TypeError("snapshotThenFollow: load must be a function");
  const { snapshot, after } = await sql.begin("isolation level repeatable read read only", async (tx) => {
    // The first statement takes the snapshot: the head it sees and what load reads belong together.
    const [row] = await tx.unsafe(
      `select greatest(coalesce((select max(position) from replica.changes), 0),
                       (select pruned_through from replica.change_feed_state))::text as head`,
    );
    const head = Number(row?.head);
    if (!Number.isSafeInteger(head))
      throw new RangeError(`replica.changes position ${row?.head} is above 2^53 - 1`);
    return { snapshot: await load(tx), after: head };
  });
  return { snapshot, after, changes: followChanges(sql, { ...options, after }) };
}
