import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { type Logger, version } from "@loops-sync/config";
import type { Sql } from "@loops-sync/db";
import { decodeWebhookSecret } from "@loops-sync/webhooks";
import { Registry } from "prom-client";
import { createAnswerBatch } from "./answer-batch.ts";
import { type ClaimedChange, claimDeliveries, FORWARD_CHANNEL } from "./delivery-transitions.ts";
import { createForwardMetrics } from "./forward-metrics.ts";
import { retryDelayMs } from "./retry-delay.ts";
import { SCAN_BATCH, scanChanges, startForwarding } from "./scan-changes.ts";
import { sendChange } from "./send-change.ts";

/** The feed's NOTIFY channel (migration 0011): a commit added changes. */
const CHANGES_CHANNEL = "loops_sync_changes";

export interface ForwarderOptions {
  sql: Sql;
  /** FORWARD_URL. */
  url: string;
  /** FORWARD_SECRET (whsec_…). Never logged. */
  secret: string;
  /** FORWARD_RESOURCES: only these resources are forwarded. Default: all. */
  resources?: readonly string[];
  /** FORWARD_TIMEOUT_MS: a 2xx within it is success. Default: 10 000. */
  timeoutMs?: number;
  /** FORWARD_MAX_AGE_HOURS: a change still failing this long after its commit is dead. Default: 24. */
  maxAgeHours?: number;
  /** Changes in flight at once, in this process (each of another resource). Default: 64. */
  maxInFlight?: number;
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
 * retry-delay.ts's. Woken by the feed's NOTIFY, by `loops-sync forward retry`, by its own settled answers,
 * and by a poll.
 */
export async function startForwarder(options: ForwarderOptions): Promise<Forwarder> {
  const { sql, url, secret, resources = [], logger } = options;
  const { timeoutMs = 10_000, maxAgeHours = 24, maxInFlight = 64, pollIntervalMs = 1000 } = options;
  const { leaseMs = timeoutMs + 5000, retryBaseMs, retryCapMs } = options;
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1) {
    throw new RangeError(
      `startForwarder: maxInFlight must be a whole number of at least 1, got ${maxInFlight}`,
    );
  }
  const key = decodeWebhookSecret(secret);
  const endpoint = describeEndpoint(url);
  const metrics = createForwardMetrics(options.registry ?? new Registry(), sql);
  const worker = `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  const maxAgeMs = maxAgeHours * 3_600_000;
  const abort = new AbortController();
  const send = { url, key, timeoutMs, signal: abort.signal, userAgent: `loops-sync/${version}` };
  const inFlight = new Set<Promise<void>>();
  let stopping = false;
  let scanDue = true;
  let pumping = false;
  let pumpAgain = false;
  let failing = false;

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
      if (!stopping) void pump();
    },
  });

  const pump = async (): Promise<void> => {
    if (pumping) {
      pumpAgain = true;
      return;
    }
    pumping = true;
    try {
      do {
        pumpAgain = false;
        if (scanDue) {
          scanDue = false;
          while ((await scanChanges(sql, resources)) === SCAN_BATCH && !stopping) {}
        }
        const free = maxInFlight - inFlight.size;
        // Nearly full: wait for answers to free a few slots, rather than a claim query per answer.
        if (free < Math.ceil(maxInFlight / 8) || stopping) break;
        for (const change of await claimDeliveries(sql, { worker, limit: free, leaseMs })) start(change);
      } while (pumpAgain && !stopping);
    } catch (error) {
      scanDue = true;
      logger.warn({ error: String(error) }, "forwarding could not read its queue; retrying on the next poll");
    } finally {
      pumping = false;
    }
  };

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
        answers.failed({
          position: change.position,
          error: result.error,
          retryInMs: aborted ? 0 : retryDelayMs(change.attempts, { baseMs: retryBaseMs, capMs: retryCapMs }),
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
      if (!stopping) void pump();
    });
    inFlight.add(tracked);
  };

  const wake = (scan: boolean) => {
    if (scan) scanDue = true;
    if (!stopping) void pump();
  };
  // On (re)connect: NOTIFYs sent while the listener was away are lost, so read as after one.
  const changes = await sql.listen(
    CHANGES_CHANNEL,
    () => wake(true),
    () => wake(true),
  );
  const retries = await sql.listen(FORWARD_CHANNEL, () => wake(false));
  const poller = setInterval(() => {
    if (answers.waiting() > 0) void answers.flush();
    wake(true);
  }, pollIntervalMs);
  poller.unref();
  logger.info(
    { endpoint, resources: resources.length > 0 ? resources : "all", maxInFlight },
    "forwarding started",
  );

  return {
    async stop(abortAfterMs) {
      stopping = true;
      clearInterval(poller);
      await Promise.all([changes.unlisten(), retries.unlisten()].map((p) => p.catch(() => {})));
      const abortTimer = setTimeout(() => abort.abort(), abortAfterMs);
      await Promise.allSettled([...inFlight]);
      clearTimeout(abortTimer);
      await answers.flush();
      logger.info({ endpoint }, "forwarding stopped");
    },
  };
}
