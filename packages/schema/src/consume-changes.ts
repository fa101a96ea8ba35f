import type postgres from "postgres";
import { CHANGES_CHANNEL, CONSUMER_NAME_PATTERN } from "./change-feed.ts";
import { isTransient, pollFeed } from "./poll-feed.ts";
import { CHANGE_COLUMNS, type Change, type ChangeRow, checkWhole, toChange } from "./read-changes.ts";
import { isStandby } from "./watch-replay.ts";

/** The channel `replica.ack_changes` notifies after a commit that acknowledged changes (payload: the consumer). */
export const CONSUMER_ACKS_CHANNEL = "loops_sync_consumers";

export interface ConsumeChangesOptions {
  /** The consumer's name (`replica.create_consumer`, `loops-sync consumers add`). */
  consumer: string;
  /** Ends consuming (cleanly, after the change in hand) when aborted. Default: none, it runs until an error. */
  signal?: AbortSignal;
  /** Changes leased per `receive_changes`. Default: 100. */
  maxRows?: number;
  /**
   * Seconds a received change stays leased to this instance: a change not handled and acknowledged by then goes
   * to another instance. Keep it above the handler's longest run. Default: 30.
   */
  visibilitySeconds?: number;
  /**
   * Milliseconds between receives when no notification comes (the fallback when NOTIFY is lost, and how soon an
   * expired lease is noticed). Default: 5000.
   */
  pollIntervalMs?: number;
  /**
   * Called when the handler throws: the transaction is rolled back, the change stays leased and is handed out
   * again after `visibilitySeconds`, and consuming goes on. Default: none, the error ends consuming (rejects).
   */
  onError?: (error: unknown, change: Change) => void;
  /** Called when a receive or an ack fails for a lost connection, before it is retried. Default: none. */
  onRetry?: (error: unknown) => void;
}

/** What the handler gets: the change, and the transaction its acknowledgement commits in. */
export type ChangeHandler = (
  change: Change,
  // biome-ignore lint/suspicious/noExplicitAny: any postgres.js transaction, whatever its custom types
  tx: postgres.TransactionSql<any>,
) => unknown;

/**
 * Thrown inside the handler's transaction to roll it back when another instance acknowledged the change first
 * (this one's lease had expired); one instance, compared by identity, never seen by the caller.
 */
const LEASE_LOST = new Error("consumeChanges: another instance acknowledged the change first");

/**
 * Handles the consumer's changes until `signal` aborts: receives leased changes (`replica.receive_changes`),
 * and for each one runs `handler(change, tx)` in a transaction that also acknowledges it
 * (`replica.ack_changes`), so the handler's writes in this database commit exactly once with the ack. Several
 * processes may consume the same consumer: each change goes to one of them, and a resource's next change waits
 * for the earlier one's ack. When another instance acknowledged a change first (this one's lease had expired),
 * the handler's transaction is rolled back. Woken by `LISTEN loops_sync_changes` and `loops_sync_consumers`;
 * after a lost connection it receives again, and what it held unacknowledged is handed out after
 * `visibilitySeconds`. `sql` must be a pool (`postgres(url)`): LISTEN holds a connection of its own.
 */
export async function consumeChanges(
  // biome-ignore lint/suspicious/noExplicitAny: any postgres.js pool, whatever its custom types
  sql: postgres.Sql<any>,
  {
    consumer,
    signal,
    maxRows = 100,
    visibilitySeconds = 30,
    pollIntervalMs = 5000,
    onError,
    onRetry,
  }: ConsumeChangesOptions,
  handler: ChangeHandler,
): Promise<void> {
  if (typeof consumer !== "string" || !CONSUMER_NAME_PATTERN.test(consumer)) {
    throw new RangeError(
      `consumeChanges: consumer must be 1-63 letters, digits, _ . : - (starting with a letter or digit), got ${JSON.stringify(consumer)}`,
    );
  }
  checkWhole("consumeChanges: maxRows", maxRows, 1, 10_000);
  checkWhole("consumeChanges: visibilitySeconds", visibilitySeconds, 1, 43_200);
  checkWhole("consumeChanges: pollIntervalMs", pollIntervalMs, 1);
  if (typeof handler !== "function") throw new TypeError("consumeChanges: handler must be a function");
  if (signal?.aborted) return;
  if (await isStandby(sql)) {
    throw Object.assign(
      new Error(
        "consumeChanges: receiving and acknowledging changes writes, and this database is a read-only standby: run it on the primary (followChanges reads a standby)",
      ),
      { code: "25006" },
    );
  }
  await pollFeed(
    sql,
    {
      channels: [
        { name: CHANGES_CHANNEL },
        { name: CONSUMER_ACKS_CHANNEL, wakes: (name) => name === consumer },
      ],
      signal,
      pollIntervalMs,
      onRetry,
    },
    async () => {
      const rows = (await sql.unsafe(
        `select ${CHANGE_COLUMNS} from replica.receive_changes($1, $2::text::integer, $3::text::integer)`,
        [consumer, String(maxRows), String(visibilitySeconds)],
      )) as unknown as ChangeRow[];
      for (const change of rows.map(toChange)) {
        if (signal?.aborted) break;
        await handleOne(sql, consumer, change, handler, onError);
      }
      return { more: rows.length >= maxRows };
    },
  );
}

async function handleOne(
  // biome-ignore lint/suspicious/noExplicitAny: any postgres.js pool
  sql: postgres.Sql<any>,
  consumer: string,
  change: Change,
  handler: ChangeHandler,
  onError: ConsumeChangesOptions["onError"],
): Promise<void> {
  try {
    await sql.begin(async (tx) => {
      await handler(change, tx);
      const [row] = await tx.unsafe(`select replica.ack_changes($1, array[$2::text::bigint]) as n`, [
        consumer,
        String(change.position),
      ]);
      if (Number(row?.n) !== 1) throw LEASE_LOST;
    });
  } catch (error) {
    if (error === LEASE_LOST) return;
    if (isTransient(error) || !onError) throw error;
    onError(error, change);
  }
}
