import type { TransactionSql } from "@loops-sync/db";
import {
  enqueueJob,
  MERCHANT_FLAG_PREFIX,
  merchantFlag,
  nextCronTick,
  recordTrickle,
} from "@loops-sync/replica";
import type { WorkerContext } from "../worker-context.ts";
import { effectiveIntervalsMs, nextReconcileAt, trickleOverran } from "./reconcile-schedule.ts";

/** Routine background jobs come after every other due job (graphile-worker picks lower numbers first). */
export const RECONCILE_PRIORITY = 10;

/**
 * A merchant new to the sync (never caught up, never reconciled): its backfill and first reconcile go ahead of
 * routine background work, still behind event jobs (0). Also what confirm_merchant and the gateway queue.
 */
export const FIRST_RUN_PRIORITY = 5;

/**
 * A merchant's reconcile, queued now at {@link FIRST_RUN_PRIORITY} (a queued one keeps its run time): what
 * confirm_merchant and the gateway queue for a merchant that joins the sync.
 */
export function queueFirstReconcile(tx: TransactionSql, merchantId: string): Promise<void> {
  return enqueueJob(tx, {
    task: "reconcile_merchant",
    payload: { merchantId },
    merchantId,
    jobKey: `reconcile:${merchantId}`,
    jobKeyMode: "preserve_run_at",
    priority: FIRST_RUN_PRIORITY,
  });
}

/** A merchant's catch-up from its cursor, queued to run now at {@link FIRST_RUN_PRIORITY}. */
export function queueFirstCatchup(tx: TransactionSql, merchantId: string): Promise<void> {
  return enqueueJob(tx, {
    task: "catchup",
    payload: { merchantId },
    merchantId,
    jobKey: `catchup:${merchantId}`,
    priority: FIRST_RUN_PRIORITY,
  });
}

/** The row of sync.scheduled_ticks that shows the reconcile trickle. */
export const RECONCILE_TICK = "reconcile";

/** The row of sync.scheduled_ticks that shows the catch-up trickle (and a start's run over the due merchants). */
export const CATCHUP_TICK = "catchup";

/** Requests one reconcile is assumed to make before any merchant's run was measured (the 7). */
export const DEFAULT_RECONCILE_CALLS = 7;

/** Requests one routine catch-up makes: one `GET /events` page, when no webhook was lost. */
export const CATCHUP_CALLS = 1;

export interface PaceOptions {
  /** RECONCILE_CRON. */
  cron: string;
  /** CATCHUP_CRON: catch-up is a trickle too. Default: no catch-up (the worker runs none). */
  catchupCron?: string | undefined;
  /** Pace the reconcile. Default: true. */
  reconcile?: boolean | undefined;
  /** LOOPS_MAX_RPS; without it the intervals never stretch. */
  maxRps?: number | undefined;
  /** RECONCILE_BUDGET_SHARE. Default 0.5. */
  share?: number | undefined;
  /**
   * Background jobs (both trickles, first runs included) queued or running at once. Default: four seconds of
   * the share's work, at the mean calls of a due run (at least 2): the budget paces their calls, this their jobs.
   */
  maxJobs?: number | undefined;
  /** The step's clock, epoch ms (a test steps through an interval with it). Default: Date.now(). */
  now?: number | undefined;
}

export interface PaceStep {
  /** Merchants whose reconcile was queued by this step. */
  queued: string[];
  /** Merchants whose catch-up was queued by this step. */
  caughtUp: string[];
  configuredMs: number;
  effectiveMs: number;
  /** Catch-up's intervals (undefined without `catchupCron`). */
  catchup?: { configuredMs: number; effectiveMs: number } | undefined;
}

/** A cron firing less often than nextCronTick looks ahead (8 days): a yearly one, as the tests' "0 0 1 1 *". */
const RARE_CRON_MS = 366 * 24 * 3600 * 1000;

/** A cron's interval: the time between its next two ticks (a year when it fires less than weekly). */
export function cronIntervalMs(cron: string, now = new Date()): number {
  const first = nextCronTick(cron, now);
  const second = first && nextCronTick(cron, first);
  return first && second ? second.getTime() - first.getTime() : RARE_CRON_MS;
}

type Kind = "reconcile_merchant" | "catchup";
interface Due {
  kind: Kind;
  id: string;
  /** When the merchant became due (−∞: never ran). */
  at: number;
  last: Date | null;
}

/**
 * One step of the background trickles: the reconcile and catch-up of each merchant once per interval, at its
 * own offset (reconcile-schedule.ts), both inside RECONCILE_BUDGET_SHARE. Queues the runs due now: merchants
 * new to the sync first (FIRST_RUN_PRIORITY; each one's backfill, then its reconcile), then the others oldest
 * due first, topping the queue up to `maxJobs` background jobs, so a backlog (an upgrade, a long outage, many merchants onboarded at once) is
 * paced the same way and never takes every job slot. Keyed per merchant: several workers stepping at once
 * queue nothing twice. Records each trickle's configured and effective interval (sync.scheduled_ticks), and
 * at the start of each reconcile round the channel catalog's refresh.
 */
export async function paceBackground(
  ctx: Pick<WorkerContext, "sql">,
  { cron, catchupCron, reconcile = true, maxRps, share = 0.5, maxJobs, now = Date.now() }: PaceOptions,
): Promise<PaceStep> {
  const { sql } = ctx;
  // Merchants with a run queued or running are not due again: a running job's key is free, and a second job
  // under it would run beside the first. A whole catch-up run (a start's, or a 0.1.0 worker's cron) covers
  // every merchant it lists: no catch-up is queued beside it. The queue is read before the merchants: a run
  // records its merchant's time before its job leaves the queue, so one that ends between the two reads is
  // seen either queued or recorded, never as neither (which would queue it again at once).
  const jobs = await sql<{ task: Kind; flag: string | null }[]>`
    select task_identifier as task,
           (select k from jsonb_object_keys(flags) k where starts_with(k, ${MERCHANT_FLAG_PREFIX}) limit 1) as flag
    from graphile_worker.jobs
    where task_identifier in ('reconcile_merchant', 'catchup') and attempts < max_attempts`;
  const rows = await sql<
    {
      id: string;
      reconciled_at: Date | null;
      reconcile_calls: number | null;
      caught_up_at: Date | null;
    }[]
  >`
    select m.id, m.reconciled_at, m.reconcile_calls, c.last_run_finished_at as caught_up_at
    from sync.merchants m left join sync.cursors c on c.merchant_id = m.id
    where m.status = 'active' order by m.id`;
  const measured = rows.filter((r) => r.reconcile_calls !== null);
  const reconcileCalls =
    measured.length > 0
      ? Math.max(1, measured.reduce((n, r) => n + (r.reconcile_calls ?? 0), 0) / measured.length)
      : DEFAULT_RECONCILE_CALLS;
  const configuredMs = cronIntervalMs(cron, new Date(now));
  const catchupMs = catchupCron ? cronIntervalMs(catchupCron, new Date(now)) : undefined;
  const demands = [
    ...(reconcile
      ? [{ merchants: rows.length, callsPerMerchant: reconcileCalls, intervalMs: configuredMs }]
      : []),
    ...(catchupMs
      ? [{ merchants: rows.length, callsPerMerchant: CATCHUP_CALLS, intervalMs: catchupMs }]
      : []),
  ];
  const effective =
    maxRps === undefined
      ? demands.map((d) => d.intervalMs)
      : effectiveIntervalsMs(demands, { maxRps, share });
  const effectiveMs = reconcile ? effective[0]! : configuredMs;
  const catchupEffectiveMs = catchupMs ? effective[demands.length - 1]! : undefined;

  const busy = new Set(jobs.map((j) => `${j.task} ${j.flag}`));
  const wholeRun = jobs.some((j) => j.task === "catchup" && j.flag === null);
  const perMerchantJobs = jobs.filter((j) => j.flag !== null).length;
  const due: Due[] = [];
  const consider = (kind: Kind, id: string, last: Date | null, intervalMs: number) => {
    if (busy.has(`${kind} ${merchantFlag(id)}`)) return;
    const at = last ? nextReconcileAt(id, last, intervalMs, now) : Number.NEGATIVE_INFINITY;
    if (at <= now) due.push({ kind, id, at, last });
  };
  for (const r of rows) {
    if (catchupEffectiveMs !== undefined && !wholeRun)
      consider("catchup", r.id, r.caught_up_at, catchupEffectiveMs);
    if (reconcile) consider("reconcile_merchant", r.id, r.reconciled_at, effectiveMs);
  }
  // New merchants first, each one's backfill then its reconcile, then the oldest due.
  const kindOrder = (d: Due) => (d.kind === "catchup" ? 0 : 1);
  due.sort(
    (a, b) =>
      a.at - b.at ||
      (a.last === null && b.last === null && a.id !== b.id ? (a.id < b.id ? -1 : 1) : 0) ||
      kindOrder(a) - kindOrder(b),
  );
  // Four seconds of the share's work at the mean calls of a run, weighted by how often each trickle runs: the
  // budget holds the calls to the share, and a job waiting for a token holds no CPU; too few jobs and slow
  // ones (a backfill's writes, a busy machine) leave the share unused.
  const runsPerSecond = demands.reduce((n, d) => n + d.merchants / d.intervalMs, 0);
  const callsPerRun =
    runsPerSecond > 0
      ? demands.reduce((n, d) => n + (d.merchants * d.callsPerMerchant) / d.intervalMs, 0) / runsPerSecond
      : DEFAULT_RECONCILE_CALLS;
  const depth = maxJobs ?? Math.max(2, Math.ceil(((maxRps ?? 25) * share * 4) / callsPerRun));
  const queued = due.slice(0, Math.max(0, depth - perMerchantJobs));
  await sql.begin(async (tx) => {
    for (const m of queued) {
      const priority = m.last ? RECONCILE_PRIORITY : FIRST_RUN_PRIORITY;
      if (m.kind === "catchup") {
        await enqueueJob(tx, {
          task: "catchup",
          payload: { merchantId: m.id, paced: true },
          merchantId: m.id,
          jobKey: `catchup:${m.id}`,
          jobKeyMode: "preserve_run_at",
          priority,
        });
      } else {
        await enqueueJob(tx, {
          task: "reconcile_merchant",
          payload: { merchantId: m.id, lastReconciledAt: m.last?.toISOString() ?? null },
          merchantId: m.id,
          jobKey: `reconcile:${m.id}`,
          jobKeyMode: "preserve_run_at",
          priority,
        });
      }
    }
  });

  const within = (at: Date | null, ms: number) => at !== null && now - at.getTime() <= ms;
  if (catchupMs && catchupEffectiveMs) {
    await recordTrickle(sql, {
      task: CATCHUP_TICK,
      intervalSeconds: catchupMs / 1000,
      effectiveIntervalSeconds: catchupEffectiveMs / 1000,
      items: rows.length,
      itemsDone: rows.filter((r) => within(r.caught_up_at, catchupEffectiveMs)).length,
      overran: trickleOverran(catchupMs, catchupEffectiveMs),
    });
  }
  const first = rows[0];
  if (reconcile) {
    const { newRound } = await recordTrickle(sql, {
      task: RECONCILE_TICK,
      intervalSeconds: configuredMs / 1000,
      effectiveIntervalSeconds: effectiveMs / 1000,
      items: rows.length,
      itemsDone: rows.filter((r) => within(r.reconciled_at, effectiveMs)).length,
      overran: trickleOverran(configuredMs, effectiveMs),
    });
    if (newRound && first) {
      await enqueueJob(sql, {
        task: "refresh_channels",
        payload: { merchantId: first.id },
        merchantId: first.id,
        jobKey: "channels",
        jobKeyMode: "preserve_run_at",
        priority: RECONCILE_PRIORITY,
      });
    }
  }
  const ids = (kind: Kind) => queued.filter((m) => m.kind === kind).map((m) => m.id);
  return {
    queued: ids("reconcile_merchant"),
    caughtUp: ids("catchup"),
    configuredMs,
    effectiveMs,
    catchup:
      catchupMs && catchupEffectiveMs
        ? { configuredMs: catchupMs, effectiveMs: catchupEffectiveMs }
        : undefined,
  };
}
