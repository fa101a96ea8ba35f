import type { Sql } from "@loops-sync/db";
import { storeEventsAndEnqueue } from "@loops-sync/db";
import type { WebhookEvent } from "@loops-sync/webhooks";
import { createGroupCommit, type GroupCommit } from "./group-commit.ts";

/** What storing one event came to; each is acknowledged with a 2xx. */
export type StoreOutcome = "stored" | "duplicate" | "ignored_self";

/** The event could not be stored: 503 (try again later) or, for content Postgres refuses, 422. */
export class EventStoreError extends Error {
  readonly code: "database_unavailable" | "store_timeout" | "unstorable_event";
  readonly status: 422 | 503;
  constructor(code: EventStoreError["code"], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "EventStoreError";
    this.code = code;
    this.status = code === "unstorable_event" ? 422 : 503;
  }
}

export interface EventStoreOptions {
  sql: Sql;
  /** Our LOOPS_APPLICATION_ID; its events are stored as ignored_self without a job. */
  applicationId: string | undefined;
  /** Longest wait for a commit before answering 503; the statement is cancelled then too. Default: 5000. */
  timeoutMs?: number;
  /** Most events per transaction. Default: 1000. */
  maxBatchSize?: number;
  /** Transactions at once (pool connections used). Default: 1 (see createReceiverApp). */
  maxConcurrentCommits?: number;
  /** Called after each committed batch, for metrics. */
  onBatch?: (size: number) => void;
}

/** An event and the JSON text it was parsed from (stored as it came). */
export interface ReceivedEvent {
  event: WebhookEvent;
  text: string;
}

export interface EventStore {
  /**
   * Resolves after the event (and its job) are committed, or it was already there. `text` is the JSON the
   * event was parsed from (default: the event serialized again).
   */
  store(event: WebhookEvent, text?: string): Promise<StoreOutcome>;
  readonly batcher: GroupCommit<ReceivedEvent, StoreOutcome | EventStoreError>;
}

// Postgres SQLSTATE class 22 (data exception): the content itself is refused, retrying cannot help.
const isDataException = (error: unknown) => /^22/.test(String((error as { code?: unknown }).code ?? ""));
const isTimeout = (error: unknown) => (error as { code?: unknown }).code === "57014";

function toStoreError(error: unknown): EventStoreError {
  if (isTimeout(error)) {
    return new EventStoreError("store_timeout", "storing the event timed out", { cause: error });
  }
  const reason = (error as { code?: string }).code ?? (error as Error).message;
  return new EventStoreError("database_unavailable", `the database could not store the event (${reason})`, {
    cause: error,
  });
}

/**
 * Stores webhook events in the inbox through group commit: concurrent events share one transaction that
 * inserts them and enqueues one process_events job. Each caller learns its own outcome after the commit.
 */
export function createEventStore({
  sql,
  applicationId,
  timeoutMs = 5000,
  maxBatchSize = 1000,
  maxConcurrentCommits = 1,
  onBatch,
}: EventStoreOptions): EventStore {
  async function transaction(received: ReceivedEvent[]): Promise<StoreOutcome[]> {
    const unique = new Map<string, ReceivedEvent>();
    for (const r of received) if (!unique.has(r.event.id)) unique.set(r.event.id, r);
    // One lock order for every batch, so two batches holding the same new ids cannot deadlock.
    const ordered = [...unique.values()].sort(({ event: a }, { event: b }) =>
      a.merchant_id === b.merchant_id ? (a.id < b.id ? -1 : 1) : a.merchant_id < b.merchant_id ? -1 : 1,
    );
    // ONE statement, outside an explicit transaction: Postgres runs it atomically in a transaction of its
    // own, so a commit costs one round trip (sql.begin costs three: BEGIN, the statement, COMMIT; see
    // docs/decisions.md, "Group commit"). A statement still running after the timeout is
    // cancelled, as statement_timeout did: nothing of it is stored.
    const result = await storeEventsAndEnqueue(
      sql,
      ordered.map((r) => r.event),
      { source: "webhook", applicationId, timeoutMs, texts: ordered.map((r) => r.text) },
    );
    onBatch?.(ordered.length);
    const fresh = new Set(result.inserted);
    const self = new Set(result.ignoredSelf);
    // The first request carrying a new id stored it; copies in the same batch are duplicates.
    return received.map(({ event: e }) => {
      if (!fresh.delete(e.id)) return "duplicate";
      return self.has(e.id) ? "ignored_self" : "stored";
    });
  }

  async function commit(events: ReceivedEvent[]): Promise<(StoreOutcome | EventStoreError)[]> {
    try {
      return await transaction(events);
    } catch (error) {
      if (!isDataException(error)) throw toStoreError(error);
      if (new Set(events.map((e) => e.event.id)).size === 1) {
        const refused = new EventStoreError("unstorable_event", "Postgres refused the event's content", {
          cause: error,
        });
        return events.map(() => refused);
      }
      // One poisoned event must not fail its neighbours: store each on its own.
      const results: (StoreOutcome | EventStoreError)[] = [];
      for (const e of events) results.push(...(await commit([e])));
      return results;
    }
  }

  const batcher = createGroupCommit({ commit, maxBatchSize, maxConcurrentCommits });

  return {
    batcher,
    async store(event, text = JSON.stringify(event)) {
      let timer: NodeJS.Timeout | undefined;
      // On timeout the event leaves the queue if it is still there: under overload, Postgres is not
      // handed work whose requester was already answered 503.
      const gaveUp = new AbortController();
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const error = new EventStoreError("store_timeout", `no commit within ${timeoutMs} ms`);
          gaveUp.abort(error);
          reject(error);
        }, timeoutMs);
      });
      try {
        const result = await Promise.race([batcher.submit({ event, text }, gaveUp.signal), timeout]);
        if (result instanceof EventStoreError) throw result;
        return result;
      } catch (error) {
        throw error instanceof EventStoreError ? error : toStoreError(error);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
