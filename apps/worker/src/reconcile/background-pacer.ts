import type { WorkerContext } from "../worker-context.ts";
import { type PaceOptions, paceBackground } from "./pace-background.ts";

export interface BackgroundPacer {
  stop(): Promise<void>;
}

export interface BackgroundPacerOptions extends PaceOptions {
  /** How often the trickles look for due merchants. Default: 1000 ms. */
  stepMs?: number;
}

/**
 * Runs the background trickles (pace-background.ts: the reconcile, and catch-up when the worker runs it) in
 * this process: a step at once (merchants new to the sync are queued at start; recent ones cost nothing),
 * then every `stepMs`, one step at a time.
 */
export function startBackgroundPacer(
  ctx: Pick<WorkerContext, "sql" | "logger">,
  { stepMs = 1000, ...options }: BackgroundPacerOptions,
): BackgroundPacer {
  let running: Promise<unknown> | undefined;
  const step = () => {
    running ??= paceBackground(ctx, options)
      .catch((error: unknown) =>
        ctx.logger.warn({ error: String(error) }, "background trickle could not look for due merchants"),
      )
      .finally(() => {
        running = undefined;
      });
  };
  step();
  const timer = setInterval(step, stepMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
