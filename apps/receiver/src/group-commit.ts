export interface GroupCommitOptions<T, R> {
  /** Stores a batch in one transaction; returns one result per item, in order. A throw fails the batch. */
  commit: (items: T[]) => Promise<R[]>;
  /** Most items in one batch. Default: 1000. */
  maxBatchSize?: number;
  /** Batches committing at the same time (each holds a pool connection). Default: 2. */
  maxConcurrentCommits?: number;
}

export interface GroupCommit<T, R> {
  /**
   * Resolves with the item's result once its batch has committed; rejects if the batch failed. Aborting
   * `signal` while the item still waits removes it (its caller has given up); once committing, it stays.
   */
  submit(item: T, signal?: AbortSignal): Promise<R>;
  /** Batches committing now. */
  readonly committing: number;
  /** Items waiting for a batch. */
  readonly queued: number;
  /** Resolves when nothing is queued or committing. */
  idle(): Promise<void>;
}

interface Waiting<T, R> {
  item: T;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * Group commit: items submitted while a commit is in flight wait and go together in the next one, so
 * many concurrent requests share one transaction (one fsync) and each is still answered after its commit.
 */
export function createGroupCommit<T, R>({
  commit,
  maxBatchSize = 1000,
  maxConcurrentCommits = 2,
}: GroupCommitOptions<T, R>): GroupCommit<T, R> {
  const queue: Waiting<T, R>[] = [];
  const idleWaiters: (() => void)[] = [];
  let committing = 0;
  let scheduled = false;

  function settleIdle() {
    if (committing === 0 && queue.length === 0 && !scheduled) {
      for (const wake of idleWaiters.splice(0)) wake();
    }
  }

  function runBatch(batch: Waiting<T, R>[]) {
    committing++;
    commit(batch.map((w) => w.item))
      .then(
        (results) => {
          batch.forEach((w, i) => {
            w.resolve(results[i] as R);
          });
        },
        (error: unknown) => {
          for (const w of batch) w.reject(error);
        },
      )
      .finally(() => {
        committing--;
        pump();
      });
  }

  function pump() {
    while (committing < maxConcurrentCommits && queue.length > 0) {
      runBatch(queue.splice(0, maxBatchSize));
    }
    settleIdle();
  }

  function schedule() {
    if (scheduled) return;
    scheduled = true;
    // One turn of the event loop lets requests read in the same poll phase join the same batch.
    setImmediate(() => {
      scheduled = false;
      pump();
    });
  }

  return {
    submit(item, signal) {
      return new Promise<R>((resolve, reject) => {
        const waiting: Waiting<T, R> = { item, resolve, reject };
        queue.push(waiting);
        signal?.addEventListener(
          "abort",
          () => {
            const index = queue.indexOf(waiting);
            if (index === -1) return;
            queue.splice(index, 1);
            reject(signal.reason);
            settleIdle();
          },
          { once: true },
        );
        if (committing < maxConcurrentCommits) schedule();
      });
    },
    get committing() {
      return committing;
    },
    get queued() {
      return queue.length;
    },
    idle() {
      return new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        settleIdle();
      });
    },
  };
}
