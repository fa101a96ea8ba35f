import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { type Logger, version } from "@loops-sync/config";
import { CHANGES_CHANNEL, type Sql } from "@loops-sync/db";
import { backoffMs, coalescing } from "@loops-sync/loops-client";
import { decodeWebhookSecrets } from "@loops-sync/webhooks";
import { Registry } from "prom-client";
import { createAnswerBatch } from "./answer-batch.ts";
import { type ClaimedChange, claimDeliveries, FORWARD_CHANNEL } from "./delivery-transitions.ts";
import { createForwardMetrics } from "./forward-metrics.ts";
import { FORWARD_HEARTBEAT_MS, markForwarderGone, markForwarderSeen } from "./forwarder-heartbeat.ts";
import { SCAN_BATCH, scanChanges, startForwarding } from "./scan-changes.ts";
import { sendChange } from "./send-change.ts";

export interface ForwarderOptions {
  sql: Sql;
  /** FORWARD_URL. */
  url: string;
  /** FORWARD_SECRET: one whsec_… secret or several separated by spaces (each signs every request). Never logged. */
  secret: string;
  /** FORWARD_RESOURCES: only these resources are forwarded. Default: all. */
  resources?: readonly string[];
  /** FORWARD_TIMEOUT_MS: a 2xx within it is success. Default: 10 000. */
  timeoutMs?: number;
  /** FORWARD_MAX_AGE_HOURS: a change still failing this long after its commit is dead. Default: 24. */
  maxAgeHours?: number;
  /** FORWARD_MAX_IN_FLIGHT: changes in flight at once, in this process (each of another resource). Default: 64. */
  maxInFlight?: number;
  /** FORWARD_MAX_RPS: requests started per second, every worker together. Default: no cap. */
  maxRps?: number;
  /** The longest Retry-After honoured; a longer one holds this long. Default: 600 000 ms. */
  maxHoldMs?: number;
  /** Looks for new changes and due retries this often even without a NOTIFY. Default: 1000 ms. */
  pollIntervalMs?: number;
  /** A claimed change is this process's until then; past it, another worker sends it. Default: timeoutMs + 5000. */
  leaseMs?: number;
  /** The first retry waits about this long, doubling up to `retryCapMs`. Default: 1000 ms. */
  retryBaseMs?: number;
  /** Default: 300 000 ms. */
  retryCapMs?: number;
  /** Default: a registry of its own. */
  registry?: Registry;
  logger: Logger;
}

export interface Forwarder {
  /** Claims nothing more; changes in flight finish or are aborted after `abortAfterMs` (and sent again later). */
  stop(abortAfterMs: number): Promise<void>;
}

/** FORWARD_URL as logs and status may show it: no credentials, no query (either may carry a token). */
export function describeEndpoint(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
}

/**
 * Delivers replica.changes to FORWARD_URL (README.md, "Forwarding changes to your endpoint"): scans new changes into the delivery
 * queue, claims the due ones, POSTs them signed, and settles the answers in batches. Which change is due, in
 * what order, and when one is dead are delivery-transitions.ts's rules; the wait between attempts is
 * `backoffMs` (@loops-sync/loops-client), from `retryBaseMs` doubling up to `retryCapMs`. Woken by the feed's NOTIFY, by `loops-sync forward retry`, by its own settled answers,
 * and by a poll.
 */
export async function startForwarder(options: ForwarderOptions): Promise<Forwarder> {
  const { sql, url, secret, resources = [], logger } = options;
  const { timeoutMs = 10_000, maxAgeHours = 24, maxInFlight = 64, pollIntervalMs = 1000 } = options;
  const { leaseMs = timeoutMs + 5000, retryBaseMs = 1000, retryCapMs = 300_000 } = options;
  const { maxRps, maxHoldMs = 600_000 } = options;
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1) {
    throw new RangeError(
      `startForwarder: maxInFlight must be a whole number of at least 1, got ${maxInFlight}`,
    );
  }
  if (maxRps !== undefined && (!Number.isInteger(maxRps) || maxRps < 1)) {
    throw new RangeError(`startForwarder: maxRps must be a whole number of at least 1, got ${maxRps}`);
  }
  const keys = decodeWebhookSecrets(secret.split(/\s+/).filter(Boolean));
  const endpoint = describeEndpoint(url);
  const metrics = createForwardMetrics(options.registry ?? new Registry(), sql);
  const worker = `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  const maxAgeMs = maxAgeHours * 3_600_000;
  const abort = new AbortController();
  const send = { url, keys, timeoutMs, signal: abort.signal, userAgent: `loops-sync/${version}` };
  const inFlight = new Set<Promise<void>>();
  let stopping = false;
  let scanDue = true;
  let failing = false;
  // The endpoint's Retry-After, seen here (epoch ms): claims wait for it at once, before the answer is
  // recorded for the other workers (held_until). One timer wakes the pump when it ends, or when the rate
  // cap has room again.
  let heldUntil = 0;
  let wakeTimer: NodeJS.Timeout | undefined;
  const wakeAfter = (ms: number) => {
    if (wakeTimer || stopping) return;
    wakeTimer = setTimeout(() => {
      wakeTimer = undefined;
      if (!stopping) void pump.run();
    }, ms);
  };

  await startForwarding(sql, endpoint);
  const answers = createAnswerBatch({
    sql,
    worker,
    maxAgeMs,
    onDead: (positions) => {
      metrics.dead.inc(positions.length);
      logger.error({ endpoint, positions, maxAgeHours }, "forwarded changes are dead");
    },
    onError: (error) =>
      logger.warn({ error: String(error) }, "forwarding could not record answers; retrying on the next poll"),
    onSettled: () => {
      if (!stopping) void pump.run();
    },
  });

  // One round: scan what is new, then claim what the free slots and the endpoint's wait allow.
  const pump = coalescing(async () => {
    try {
      if (scanDue) {
        scanDue = false;
        while ((await scanChanges(sql, resources)) === SCAN_BATCH && !stopping) {}
      }
      const free = maxInFlight - inFlight.size;
      // Nearly full: wait for answers to free a few slots, rather than a claim query per answer.
      if (free < Math.ceil(maxInFlight / 8) || stopping) return "done";
      const held = heldUntil - Date.now();
      if (held > 0) {
        wakeAfter(held);
        return "done";
      }
      const claimed = await claimDeliveries(sql, { worker, limit: free, leaseMs, maxRps });
      for (const change of claimed.changes) start(change);
      if (claimed.nextSlotMs !== null) wakeAfter(claimed.nextSlotMs);
      return stopping ? "done" : undefined;
    } catch (error) {
      scanDue = true;
      logger.warn({ error: String(error) }, "forwarding could not read its queue; retrying on the next poll");
      return "done";
    }
  });

  const start = (change: ClaimedChange) => {
    const sent = sendChange(change.position, change.body, send).then((result) => {
      if (result.ok) {
        answers.delivered(change.position);
        metrics.delivered.inc();
        metrics.lag.observe(Math.max(0, Date.now() - change.changedAt.getTime()) / 1000);
        if (failing) logger.info({ endpoint }, "forwarding endpoint answers again");
        failing = false;
      } else {
        const aborted = abort.signal.aborted;
        const holdMs = result.retryAfterMs === undefined ? 0 : Math.min(result.retryAfterMs, maxHoldMs);
        if (holdMs > 0) {
          heldUntil = Math.max(heldUntil, Date.now() + holdMs);
          logger.warn(
            { endpoint, holdMs, error: result.error },
            "forwarding endpoint asked to wait (Retry-After)",
          );
        }
        const backoff = backoffMs(change.attempts - 1, { baseMs: retryBaseMs, capMs: retryCapMs });
        answers.failed({
          position: change.position,
          error: result.error,
          retryInMs: aborted ? 0 : Math.max(backoff, holdMs),
          holdMs,
        });
        if (!aborted) metrics.failedAttempts.inc({ kind: result.kind });
        if (!failing && !aborted) {
          logger.warn(
            { endpoint, position: change.position, error: result.error },
            "forwarding attempt failed",
          );
        }
        failing = !aborted;
      }
    });
    const tracked = sent.finally(() => {
      inFlight.delete(tracked);
      // A freed slot takes another resource's change while the answer is being recorded.
      if (!stopping) void pump.run();
    });
    inFlight.add(tracked);
  };

  const wake = (scan: boolean) => {
    if (scan) scanDue = true;
    if (!stopping) void pump.run();
  };
  // On (re)connect: NOTIFYs sent while the listener was away are lost, so read as after one.
  const changes = await sql.listen(
    CHANGES_CHANNEL,
    () => wake(true),
    () => wake(true),
  );
  // `forward retry` lifts the hold for every worker (held_until), so this one's too.
  const retries = await sql.listen(FORWARD_CHANNEL, () => {
    heldUntil = 0;
    wake(false);
  });
  const poller = setInterval(() => {
    if (answers.waiting() > 0) void answers.flush();
    wake(true);
  }, pollIntervalMs);
  poller.unref();
  const beat = () =>
    markForwarderSeen(sql).catch((error: unknown) =>
      logger.warn({ error: String(error) }, "forwarding could not record that it runs; retrying"),
    );
  const heartbeat = setInterval(() => void beat(), FORWARD_HEARTBEAT_MS);
  heartbeat.unref();
  logger.info(
    { endpoint, resources: resources.length > 0 ? resources : "all", maxInFlight, maxRps: maxRps ?? "none" },
    "forwarding started",
  );

  return {
    async stop(abortAfterMs) {
      stopping = true;
      clearInterval(poller);
      clearInterval(heartbeat);
      clearTimeout(wakeTimer);
      await Promise.all([changes.unlisten(), retries.unlisten()].map((p) => p.catch(() => {})));
      const abortTimer = setTimeout(() => abort.abort(), abortAfterMs);
      await Promise.allSettled([...inFlight]);
      clearTimeout(abortTimer);
      await answers.flush();
      await markForwarderGone(sql).catch(() => {});
      logger.info({ endpoint }, "forwarding stopped");
    },
  };
}
