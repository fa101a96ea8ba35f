import type { Sql } from "@loops-sync/db";
import { storeEventsAndEnqueue, unstorableReason } from "@loops-sync/db";
import { activeTracing, withSpan } from "@loops-sync/tracing";
import type { WebhookEvent } from "@loops-sync/webhooks";
import { createGroupCommit, type GroupCommit } from "./group-commit.ts";
import { ReceiverError } from "./receiver-error.ts";

/** What storing one event came to; each is acknowledged with a 2xx. */
export type StoreOutcome = "stored" | "duplicate" | "ignored_self";

export interface EventStoreOptions {
  sql: Sql;
  /** Our LOOPS_APPLICATION_ID; its events are stored as ignored_self without a job. */
  applicationId: string | undefined;
  /**
   * Time an event may take from arrival to commit: one still queued then is answered 503, one being
   * committed has its statement cancelled then. Default: 5000.
   */
  timeoutMs?: number;
  /**
   * Extra wait for a statement whose cancel did not end it (an unreachable server) before answering 503
   * anyway. Default: 3000 (5 s + 3 s stays under Loops' 10 s).
   */
  cancelGraceMs?: number;
  /** Most events per transaction. Default: 1000. */
  maxBatchSize?: number;
  /** Transactions at once (pool connections used). Default: 1 (see createReceiverApp). */
  maxConcurrentCommits?: number;
  /** Called after each committed batch, for metrics. */
  onBatch?: (size: number) => void;
}

/** An event, the JSON text it was parsed from (stored as it came), and when its requester stops waiting. */
export interface ReceivedEvent {
  event: WebhookEvent;
  text: string;
  /** performance.now() value after which the event is not sent any more, and its statement is cancelled. */
  deadline: number;
  /** The W3C traceparent of the request's span, stored with the event (tracing on only). */
  traceParent?: string | undefined;
}

export interface EventStore {
  /**
   * Resolves after the event (and its job) are committed, or it was already there; rejects with an
   * ReceiverError only when it is not stored. `text` is the JSON the event was parsed from (default:
   * the event serialized again). `traceParent`: the request's span, stored with the event (tracing on).
   */
  store(event: WebhookEvent, text?: string, traceParent?: string): Promise<StoreOutcome>;
  readonly batcher: GroupCommit<ReceivedEvent, StoreOutcome | ReceiverError>;
}

type Result = StoreOutcome | ReceiverError;

/** The inbox commit's span, after the database semantic conventions. */
const INBOX_SPAN_ATTRIBUTES = {
  "db.system.name": "postgresql",
  "db.operation.name": "INSERT",
  "db.collection.name": "sync.events",
};

function toStoreError(error: unknown): ReceiverError {
  const code = (error as { code?: unknown }).code;
  const why = `${typeof code === "string" ? `${code}: ` : ""}${(error as Error).message}`;
  if (code === "57014") {
    return new ReceiverError("store_timeout", `storing the event timed out (${why})`, { cause: error });
  }
  return new ReceiverError("database_unavailable", `the database could not store the event (${why})`, {
    cause: error,
  });
}

/** One lock order for every batch, so two batches holding the same new ids cannot deadlock. */
const byMerchantThenId = ({ event: a }: ReceivedEvent, { event: b }: ReceivedEvent) =>
  a.merchant_id === b.merchant_id ? (a.id < b.id ? -1 : 1) : a.merchant_id < b.merchant_id ? -1 : 1;

/**
 * Stores webhook events in the inbox through group commit: concurrent events share one statement that
 * inserts them and enqueues their work. Each caller learns its own outcome after the commit. A batch that
 * Postgres refuses for its content is split in halves until the events it can never store are alone, so
 * their neighbours are stored and every answer says what happened to that event.
 */
export function createEventStore({
  sql,
  applicationId,
  timeoutMs = 5000,
  cancelGraceMs = 3000,
  maxBatchSize = 1000,
  maxConcurrentCommits = 1,
  onBatch,
}: EventStoreOptions): EventStore {
  // An event with less time left than this is answered 503 unsent, so that under overload the oldest events
  // are shed instead of every statement being cancelled at its oldest event's deadline.
  const minCommitMs = Math.min(1000, timeoutMs / 5);

  /**
   * Sends one statement for the `candidates` (unique ids) with time left and records each id's result in
   * `results`. Returns the events it sent and, if the statement failed, its error.
   */
  async function storeOnce(
    candidates: ReceivedEvent[],
    results: Map<string, Result>,
  ): Promise<{ sent: ReceivedEvent[]; error?: unknown }> {
    const now = performance.now();
    const sent = candidates.filter((e) => e.deadline - now >= minCommitMs);
    if (sent.length < candidates.length) {
      const late = new ReceiverError(
        "store_timeout",
        `not sent: under ${minCommitMs} ms of ${timeoutMs} left`,
      );
      for (const e of candidates) if (e.deadline - now < minCommitMs) results.set(e.event.id, late);
      if (sent.length === 0) return { sent };
    }
    // Cancelled at the earliest deadline among them: no requester is answered 503 for a commit that lands later.
    const remaining = Math.min(...sent.map((e) => e.deadline)) - now;
    try {
      // ONE statement outside an explicit transaction: Postgres runs it atomically, in one round trip.
      const result = await storeEventsAndEnqueue(
        sql,
        sent.map((r) => r.event),
        {
          source: "webhook",
          applicationId,
          timeoutMs: Math.ceil(remaining),
          texts: sent.map((r) => r.text),
          traceParents: sent.some((r) => r.traceParent) ? sent.map((r) => r.traceParent) : undefined,
        },
      );
      onBatch?.(sent.length);
      const self = new Set(result.ignoredSelf);
      for (const { event } of sent) results.set(event.id, self.has(event.id) ? "ignored_self" : "duplicate");
      for (const id of result.inserted) if (!self.has(id)) results.set(id, "stored");
      return { sent };
    } catch (error) {
      return { sent, error };
    }
  }

  /** Stores `events`; on a content refusal, bisects so only the events Postgres can never store fail. */
  async function storeIsolated(events: ReceivedEvent[], results: Map<string, Result>): Promise<void> {
    const { sent, error } = await storeOnce(events, results);
    if (error === undefined) return;
    const reason = unstorableReason(error);
    if (reason === undefined) {
      // Transient: the statement is atomic, so none of these is stored and each may be retried.
      const failed = toStoreError(error);
      for (const e of sent) results.set(e.event.id, failed);
      return;
    }
    if (sent.length === 1) {
      const code = (error as { code?: string }).code;
      results.set(
        sent[0]!.event.id,
        new ReceiverError("unstorable_event", `Postgres refused the event (SQLSTATE ${code})`, {
          cause: error,
          reason,
        }),
      );
      return;
    }
    const half = Math.ceil(sent.length / 2);
    await storeIsolated(sent.slice(0, half), results);
    await storeIsolated(sent.slice(half), results);
  }

  async function commit(received: ReceivedEvent[]): Promise<Result[]> {
    const unique = new Map<string, ReceivedEvent>();
    for (const r of received) if (!unique.has(r.event.id)) unique.set(r.event.id, r);
    const results = new Map<string, Result>();
    await storeIsolated([...unique.values()].sort(byMerchantThenId), results);
    // The first request carrying a new id stored it; copies in the same batch are duplicates.
    const answered = new Set<string>();
    return received.map(({ event: { id } }) => {
      const result = results.get(id)!;
      if (result instanceof ReceiverError) return result;
      if (answered.has(id)) return "duplicate";
      answered.add(id);
      return result;
    });
  }

  const batcher = createGroupCommit({ commit, maxBatchSize, maxConcurrentCommits });

  return {
    batcher,
    store(event, text = JSON.stringify(event), traceParent) {
      // Only within a traced request (one the sampler kept): the wait for a group commit and the commit.
      if (!traceParent || !activeTracing()) return storeOne(event, text, traceParent);
      return withSpan("INSERT sync.events", { kind: "client", attributes: INBOX_SPAN_ATTRIBUTES }, () =>
        storeOne(event, text, traceParent),
      );
    },
  };

  async function storeOne(
    event: WebhookEvent,
    text: string,
    traceParent: string | undefined,
  ): Promise<StoreOutcome> {
    const deadline = performance.now() + timeoutMs;
    // At the deadline a still-queued event leaves the queue (answered 503, never sent); one being
    // committed waits for its statement, which is cancelled at that deadline, so the answer tells the
    // truth. Only a statement the cancel cannot reach (a dead server) is given up on after the grace.
    const gaveUp = new AbortController();
    let backstop: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      gaveUp.abort(new ReceiverError("store_timeout", `no commit within ${timeoutMs} ms`));
    }, timeoutMs);
    const abandoned = new Promise<never>((_, reject) => {
      backstop = setTimeout(
        () => reject(new ReceiverError("store_timeout", `no answer from Postgres within ${timeoutMs} ms`)),
        timeoutMs + cancelGraceMs,
      );
    });
    try {
      const result = await Promise.race([
        batcher.submit({ event, text, deadline, traceParent }, gaveUp.signal),
        abandoned,
      ]);
      if (result instanceof ReceiverError) throw result;
      return result;
    } catch (error) {
      throw error instanceof ReceiverError ? error : toStoreError(error);
    } finally {
      clearTimeout(timer);
      clearTimeout(backstop);
    }
  }
}
