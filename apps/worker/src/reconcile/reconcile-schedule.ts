import { createHash } from "node:crypto";

/**
 * When each merchant is reconciled: once per interval, at its own offset in it (a stable hash of its id), so
 * the merchants form a steady trickle instead of a burst at the cron's tick (docs/scaling.md, "The reconcile
 * is a trickle"). Pure: the pacer (reconcile-pacer.ts) and its tests share it.
 */

/** The merchant's offset in every interval, in [0, 1): the first 32 bits of SHA-1 of its id. */
export function merchantPhase(merchantId: string): number {
  return createHash("sha1").update(merchantId).digest().readUInt32BE(0) / 2 ** 32;
}

/**
 * The merchant's next reconcile, epoch ms: never reconciled → now; otherwise its first slot (k + phase) ×
 * interval more than half an interval after its last run. In steady state the runs are one interval apart;
 * a run off its slot (a start, `loops-sync refresh`) is followed by the next slot at least half an interval
 * later, so a process start calls for no merchant reconciled within the last half interval.
 */
export function nextReconcileAt(
  merchantId: string,
  reconciledAt: Date | null,
  intervalMs: number,
  now: number,
): number {
  if (!reconciledAt) return now;
  const phase = merchantPhase(merchantId);
  const after = reconciledAt.getTime() + intervalMs / 2;
  const k = Math.floor(after / intervalMs - phase) + 1;
  return (k + phase) * intervalMs;
}

export interface TrickleSizing {
  /** Active merchants. */
  merchants: number;
  /** Requests one merchant's reconcile makes (the recent runs' mean). */
  callsPerMerchant: number;
  /** RECONCILE_CRON's interval, ms. */
  intervalMs: number;
  /** LOOPS_MAX_RPS. */
  maxRps: number;
  /** RECONCILE_BUDGET_SHARE. */
  share: number;
}

/**
 * The interval the trickle keeps: the configured one while every merchant's reconcile fits in the share of the
 * budget, else as long as they need at that share (the budget's ring grants `maxRps` per 1.2 s, see
 * packages/db/src/request-budget/budget-slots.ts).
 */
export function effectiveIntervalMs({
  merchants,
  callsPerMerchant,
  intervalMs,
  maxRps,
  share,
}: TrickleSizing): number {
  const callsPerSecond = (maxRps * share) / 1.2;
  const needed = ((merchants * callsPerMerchant) / callsPerSecond) * 1000;
  return Math.max(intervalMs, Math.ceil(needed));
}

/** Stretched past twice the configured interval: the reconcile cannot keep its schedule (an overrun). */
export function trickleOverran(configuredMs: number, effectiveMs: number): boolean {
  return effectiveMs > 2 * configuredMs;
}

/** What one trickle (the reconcile, catch-up) asks of the background share. */
export interface TrickleDemand {
  /** Active merchants. */
  merchants: number;
  /** Requests one merchant's run makes. */
  callsPerMerchant: number;
  /** The configured interval (RECONCILE_CRON's, CATCHUP_CRON's), ms. */
  intervalMs: number;
}

/**
 * The intervals the trickles keep together inside one share of the budget: the configured ones while every
 * merchant's runs of every trickle fit, else each stretched by the same factor (what they need together ÷ what
 * the share gives), so no trickle starves the other and their sum never passes the share. In input order.
 */
export function effectiveIntervalsMs(
  trickles: readonly TrickleDemand[],
  { maxRps, share }: { maxRps: number; share: number },
): number[] {
  const callsPerSecond = (maxRps * share) / 1.2;
  const needed = trickles.reduce((n, t) => n + (t.merchants * t.callsPerMerchant) / (t.intervalMs / 1000), 0);
  const stretch = Math.max(1, needed / callsPerSecond);
  return trickles.map((t) => Math.max(t.intervalMs, Math.round(t.intervalMs * stretch)));
}
