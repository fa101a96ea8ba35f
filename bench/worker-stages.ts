/** One stage of the worker's order refreshes over the measured window, from its Prometheus histogram. */
export interface StageFigure {
  stage: string;
  count: number;
  /** Mean, ms. */
  meanMs: number;
  /** Share of the refreshes over 100 ms in this stage (the histogram has a bucket at 0.1 s). */
  over100ms: number;
}

type Histograms = Map<string, { sum: number; count: number; le100: number }>;

const STAGE = "loops_sync_worker_order_refresh_stage_seconds";
const LAG = "loops_sync_worker_order_refresh_lag_seconds";

/** The worker's order refresh histograms as they stand, read from its /metrics. */
export async function readWorkerStages(metricsUrl: string): Promise<Histograms> {
  const text = await (await fetch(metricsUrl)).text();
  const found: Histograms = new Map();
  for (const line of text.split("\n")) {
    const m = /^(\w+?)_(sum|count|bucket)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || (m[1] !== STAGE && m[1] !== LAG)) continue;
    const labels = Object.fromEntries(
      [...(m[3] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]),
    );
    const key = m[1] === LAG ? "event stored → replica" : labels.stage!;
    const entry = found.get(key) ?? { sum: 0, count: 0, le100: 0 };
    if (m[2] === "sum") entry.sum = Number(m[4]);
    else if (m[2] === "count") entry.count = Number(m[4]);
    else if (labels.le === "0.1") entry.le100 = Number(m[4]);
    found.set(key, entry);
  }
  return found;
}

/** What the stages gained between two readings: the measured window's own figures. */
export function stagesBetween(before: Histograms, after: Histograms): StageFigure[] {
  return [...after].map(([stage, a]) => {
    const b = before.get(stage) ?? { sum: 0, count: 0, le100: 0 };
    const count = a.count - b.count;
    return {
      stage,
      count,
      meanMs: count > 0 ? ((a.sum - b.sum) / count) * 1000 : 0,
      over100ms: count > 0 ? 1 - (a.le100 - b.le100) / count : 0,
    };
  });
}
