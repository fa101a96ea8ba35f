import {
  claimDueProbe,
  classifyUpstreamFailure,
  probeAccepted,
  probeRefused,
  type UpstreamPause,
} from "@loops-sync/replica";
import type { WorkerContext } from "../worker-context.ts";

export interface PauseProber {
  /** Stops looking for due probes and waits for a probe in flight. */
  stop(): Promise<void>;
}

export interface PauseProberOptions {
  /** How often to look for a due probe. Default: a fifth of the first backoff, between 100 ms and 5 s. */
  everyMs?: number;
}

/**
 * Runs the due probes of paused scopes (the state machine and its backoff: upstream-pause.ts): whenever a
 * probe is due and no process runs it, this one makes ONE cheap call for the pause's merchant, on the path
 * that was refused (`probeCall`): a probe of another path could pass while the refused one still fails.
 * A refusal that still holds the scope, or no answer (network, 5xx, 429, keeping the cause), is
 * `probeRefused`; anything else got past the refusal and is `probeAccepted`.
 */
export function startPauseProber(ctx: WorkerContext, options: PauseProberOptions = {}): PauseProber {
  const { sql, logger, pauseBackoff } = ctx;
  const everyMs = options.everyMs ?? Math.min(5000, Math.max(100, (pauseBackoff.firstSeconds * 1000) / 5));
  const controller = new AbortController();
  let running: Promise<void> | undefined;

  async function probe(pause: UpstreamPause): Promise<void> {
    try {
      await probeCall(ctx, pause, controller.signal);
    } catch (error) {
      if (controller.signal.aborted) return;
      const failure = classifyUpstreamFailure(error);
      const refusedAgain = failure.kind === "paused" && pauseApplies(pause, failure.scope);
      if (refusedAgain || failure.kind === "transient" || failure.kind === "rate_limited") {
        const until = await probeRefused(sql, pause.scope, pauseBackoff, refusedAgain ? failure : undefined);
        logger.warn({ scope: pause.scope, cause: pause.cause, until }, "probe refused; calls stay paused");
        return;
      }
      // Anything else (a 404, a revoked merchant) got past what paused the scope.
    }
    await probeAccepted(sql, pause.scope);
    logger.info({ scope: pause.scope, cause: pause.cause }, "probe accepted; calls to Loops resume");
  }

  async function tick(): Promise<void> {
    const pause = await claimDueProbe(sql);
    if (pause) await probe(pause);
  }

  const timer = setInterval(() => {
    if (running) return;
    running = tick()
      .catch((error: unknown) => logger.warn({ err: error }, "pause probe failed; trying again later"))
      .finally(() => {
        running = undefined;
      });
  }, everyMs);
  timer.unref();

  return {
    async stop() {
      clearInterval(timer);
      controller.abort();
      await running;
    },
  };
}

/**
 * The cheapest call on the refused route: GET /events?limit=1 for the event log, GET /connection, and
 * GET /orders?limit=1 for the orders, the token (it passes authentication and suspension) or an unknown route.
 */
async function probeCall(ctx: WorkerContext, pause: UpstreamPause, signal: AbortSignal): Promise<void> {
  const api = ctx.client.forMerchant(pause.merchantId);
  const route = pause.route ?? "";
  if (route.startsWith("/events")) await api.events.list({ limit: 1 }, { signal });
  else if (route.startsWith("/connection")) await api.connection.get({ signal });
  else await api.orders.list({ limit: 1 }, { signal });
}

/** A merchant's own refusal still holds a merchant scope; only the application's holds the application. */
function pauseApplies(pause: UpstreamPause, scope: "application" | "merchant"): boolean {
  return pause.scope === "application" ? scope === "application" : true;
}
