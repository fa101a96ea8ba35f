import type { Logger } from "./logger.ts";

/** How a part stops; what it returns is ignored. */
export type Stop = () => unknown;

export interface StopStack {
  /**
   * Adds the stop of a part that has just started. It runs before every stop pushed earlier: a part stops
   * before what it was started on (the receiver before the pool it writes with).
   */
  push(name: string, stop: Stop): void;
  /**
   * Adds a stop that runs at the same time as the last one pushed (or beside), for parts that do not depend
   * on one another and each take a while to drain: stopped one by one, their waits would add up.
   */
  beside(name: string, stop: Stop): void;
  /**
   * Runs every stop once, last pushed first, and waits for each layer before the next. A failure is logged
   * with its part's name and the rest still stop. Resolves to the failures (empty: all stopped); a second
   * call waits for the first and runs nothing again.
   */
  stopAll(): Promise<readonly StopFailure[]>;
}

export interface StopFailure {
  name: string;
  error: unknown;
}

/**
 * One last-in-first-out list of stops for a process or a service that starts parts one after another. Push
 * each part's stop as soon as it runs: a start that fails halfway then stops exactly what ran, in the
 * reverse order, and no stop error is swallowed unseen.
 */
export function createStopStack({ logger }: { logger: Logger }): StopStack {
  const layers: { name: string; stop: Stop }[][] = [];
  let stopping: Promise<readonly StopFailure[]> | undefined;
  const refuseLate = (name: string) => {
    if (stopping) throw new Error(`stop stack: "${name}" was pushed after stopAll began`);
  };
  return {
    push(name, stop) {
      refuseLate(name);
      layers.push([{ name, stop }]);
    },
    beside(name, stop) {
      refuseLate(name);
      const top = layers.at(-1);
      if (top) top.push({ name, stop });
      else layers.push([{ name, stop }]);
    },
    stopAll() {
      stopping ??= (async () => {
        const failures: StopFailure[] = [];
        for (let layer = layers.pop(); layer; layer = layers.pop()) {
          await Promise.all(
            layer.map(async ({ name, stop }) => {
              try {
                await stop();
              } catch (error) {
                failures.push({ name, error });
                logger.error(
                  { part: name, error: (error as Error)?.message ?? String(error) },
                  "stop failed",
                );
              }
            }),
          );
        }
        return failures;
      })();
      return stopping;
    },
  };
}
