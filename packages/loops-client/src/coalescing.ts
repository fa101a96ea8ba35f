/** What one round of a {@link coalescing} loop says about the next: go on, stop, or go on only if woken. */
export type RoundEnd = "more" | "done" | undefined;

export interface Coalescing {
  /**
   * Starts the loop; while it runs, asks it for one more round after the current one (however many ask).
   * Resolves when the loop this call started or joined has ended.
   */
  run(): Promise<void>;
  /** Whether the loop is running now. */
  readonly running: boolean;
  /** Resolves once the running loop, if any, has ended, without asking it for another round. */
  ended(): Promise<void>;
}

/**
 * The "flag and again" loop, written once: one loop at a time, however many callers wake it. After each
 * round it goes on when the round said "more", or when `run()` was called during the round, unless the
 * round said "done". `onEnd` runs once the loop has ended, when `run()` starts a new one. A round must not
 * throw: it handles its own failures (a throw ends the loop and rejects `run()`'s promise).
 */
export function coalescing(round: () => Promise<RoundEnd>, onEnd?: () => void): Coalescing {
  let loop: Promise<void> | undefined;
  let again = false;
  return {
    run() {
      if (loop) {
        again = true;
        return loop;
      }
      loop = (async () => {
        for (;;) {
          again = false;
          const end = await round();
          if (end === "done" || (end !== "more" && !again)) return;
        }
      })().finally(() => {
        loop = undefined;
        onEnd?.();
      });
      return loop;
    },
    get running() {
      return loop !== undefined;
    },
    async ended() {
      while (loop) await loop;
    },
  };
}
