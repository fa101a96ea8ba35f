import type { Sql } from "@loops-sync/db";
import { coalescing } from "@loops-sync/loops-client";
import { type FailedAttempt, settleDeliveries } from "./delivery-transitions.ts";

export interface AnswerBatch {
  /** A 2xx for this change. */
  delivered(position: number): void;
  /** No 2xx in time; try again after `retryInMs`. */
  failed(attempt: FailedAttempt): void;
  /** Answers gathered and not yet recorded. */
  waiting(): number;
  /** Records what is gathered (and what arrives meanwhile); resolves when done or when recording failed. */
  flush(): Promise<void>;
}

export interface AnswerBatchOptions {
  sql: Sql;
  /** The lease holder's name (settle moves back only its own leases). */
  worker: string;
  maxAgeMs: number;
  /** Changes that died in a flush. */
  onDead: (positions: number[]) => void;
  /** A flush could not record its answers; they stay for the next. */
  onError: (error: unknown) => void;
  /** A flush ended with everything recorded (a good moment to claim more). */
  onSettled: () => void;
}

/**
 * Gathers the endpoint's answers and records them with one `settleDeliveries` statement per flush, so a busy
 * forwarder costs a statement per batch of answers, not per answer. Answers that arrive while a flush runs go
 * in the next one at once; after a failed flush they wait for the next call (the forwarder's poll).
 */
export function createAnswerBatch({
  sql,
  worker,
  maxAgeMs,
  onDead,
  onError,
  onSettled,
}: AnswerBatchOptions): AnswerBatch {
  let delivered: number[] = [];
  let failed: FailedAttempt[] = [];
  /** Whether every round of the current loop recorded its answers. */
  let recorded = true;

  const loop = coalescing(
    async () => {
      const batch = { delivered, failed };
      delivered = [];
      failed = [];
      try {
        const dead = await settleDeliveries(sql, { worker, ...batch, maxAgeMs });
        if (dead.length > 0) onDead(dead);
        return undefined;
      } catch (error) {
        // Kept for the next flush; a lease that expires meanwhile only means a duplicate.
        delivered.push(...batch.delivered);
        failed.push(...batch.failed);
        recorded = false;
        onError(error);
        return "done";
      }
    },
    () => {
      // Answers that came after the loop's last look go now, not at the next poll.
      if (recorded && delivered.length + failed.length > 0) void flush();
      else if (recorded) onSettled();
    },
  );
  const flush = (): Promise<void> => {
    if (!loop.running) recorded = true;
    return loop.run();
  };

  return {
    delivered(position) {
      delivered.push(position);
      void flush();
    },
    failed(attempt) {
      failed.push(attempt);
      void flush();
    },
    waiting: () => delivered.length + failed.length,
    async flush() {
      await loop.ended();
      await flush();
    },
  };
}
