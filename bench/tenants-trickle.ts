// What `bench/tenants.ts --start synced` adds (issue 52): merchants already synced, then the background
// trickles (catch-up and the reconcile) at their share of the budget between two quiet windows, with the calls
// Loops sees each second and live orders' freshness throughout.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { Sql } from "@loops-sync/db";
import type { Sandbox } from "@loops-sync/sandbox";
import { percentile } from "./percentile.ts";
import { backgroundCalls } from "./rush-scenario.ts";

/**
 * Every merchant active, caught up and reconciled just now (a deployment in steady state after its runs), as
 * if its first start had happened: no backfill or first reconcile is left, and nothing is due.
 */
export async function seedSyncedMerchants(
  sql: Sql,
  ids: readonly string[],
  reconcileCalls = 7,
): Promise<void> {
  await sql`
    insert into sync.merchants (id, learned_from, status, reconciled_at, reconcile_calls)
    select id, 'config', 'active', now(), ${reconcileCalls} from unnest(${ids as string[]}::text[]) id
    on conflict (id) do nothing`;
  await sql`
    insert into sync.cursors (merchant_id, last_run_finished_at, last_run_status)
    select id, now(), 'ok' from unnest(${ids as string[]}::text[]) id on conflict (merchant_id) do nothing`;
}

/**
 * The merchants live orders go to get a real first start (backfill, first catch-up and reconcile, their
 * locations mirrored) before the windows: the others' rows are seeded, so an order of one of those would
 * also fetch its locations, which a synced deployment never does. Resolves once the worker has done them.
 */
export async function syncForReal(sql: Sql, ids: readonly string[], timeoutMs = 300_000): Promise<void> {
  await sql`update sync.merchants set reconciled_at = null where id = any(${ids as string[]}::text[])`;
  await sql`delete from sync.cursors where merchant_id = any(${ids as string[]}::text[])`;
  for (const until = performance.now() + timeoutMs; performance.now() < until; ) {
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from sync.merchants m join sync.cursors c on c.merchant_id = m.id
      where m.id = any(${ids as string[]}::text[]) and m.reconciled_at is not null
        and c.last_run_finished_at is not null`;
    if (row?.n === ids.length) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the ${ids.length} live merchants were not synced within ${timeoutMs / 1000} s`);
}

/** Every merchant's last catch-up and reconcile `ago` (SQL interval) ago: `'0'` quiet, hours ago all due. */
export async function setLastRuns(sql: Sql, ago: string): Promise<void> {
  await sql`update sync.merchants set reconciled_at = now() - ${ago}::interval where status = 'active'`;
  await sql`update sync.cursors set last_run_finished_at = now() - ${ago}::interval`;
}

const total = (sandbox: Sandbox) => {
  const s = sandbox.stats();
  return Object.values(s.apiCalls).reduce((a, b) => a + b, 0) + s.tokenRequests;
};

/** Requests Loops saw in each second (all, and background routes), from when it starts until stop(). */
export function startCallMeter(sandbox: Sandbox) {
  const seconds: { at: number; all: number; background: number }[] = [];
  let last = { all: total(sandbox), background: backgroundCalls(sandbox.stats().apiCalls) };
  const timer = setInterval(() => {
    const now = { all: total(sandbox), background: backgroundCalls(sandbox.stats().apiCalls) };
    // The counters were reset (the bench reads the sliding busiest second per window): count from zero.
    if (now.all < last.all) last = { all: 0, background: 0 };
    seconds.push({
      at: performance.now(),
      all: now.all - last.all,
      background: now.background - last.background,
    });
    last = now;
  }, 1000);
  return {
    /** The seconds that ended within [from, to) (performance.now()). */
    between(from: number, to: number) {
      return seconds.filter((s) => s.at > from && s.at <= to + 1);
    },
    stop() {
      clearInterval(timer);
    },
  };
}

export interface Window {
  name: string;
  from: number;
  to: number;
  /** The calls of the window by route, most first. */
  routes?: string;
}

/** The sandbox's calls by route since `before` (a stats snapshot's `apiCalls`), most first. */
export function routesSince(sandbox: Sandbox, before: Record<string, number>): string {
  const now = sandbox.stats().apiCalls;
  return Object.entries(now)
    .map(([route, n]) => [route, n - (before[route] ?? 0)] as const)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([route, n]) => `${route} ${n}`)
    .join(", ");
}

/** One line per window: the calls of each second against the budget, background among them, live p99. */
export function describeWindows(
  windows: readonly Window[],
  meter: ReturnType<typeof startCallMeter>,
  live: readonly { createdAt: number; ms: number }[],
  rps: number,
): string[] {
  const lines: string[] = [];
  for (const w of windows) {
    const seconds = meter.between(w.from, w.to);
    const all = seconds.map((s) => s.all);
    const background = seconds.map((s) => s.background);
    const ages = live.filter((o) => o.createdAt >= w.from && o.createdAt < w.to).map((o) => o.ms);
    const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
    lines.push(
      `${w.name} (${((w.to - w.from) / 1000).toFixed(0)} s): calls/s mean ${mean(all).toFixed(1)}, max ${Math.max(0, ...all)} / ${rps}` +
        ` (${all.filter((n) => n > rps).length} seconds over); background mean ${mean(background).toFixed(1)}/s, max ${Math.max(0, ...background)}` +
        `; live orders ${ages.length}, p50 ${percentile(ages, 50).toFixed(0)} ms, p99 ${percentile(ages, 99).toFixed(0)} ms, max ${Math.max(0, ...ages).toFixed(0)} ms`,
    );
    lines.push(`  calls each second: ${all.join(" ")}`);
    if (w.routes) lines.push(`  calls by route: ${w.routes}`);
    lines.push(`  background each second: ${background.join(" ")}`);
    // Live p99 in 10 s steps: "throughout", not only on average.
    const steps: string[] = [];
    for (let t = w.from; t < w.to; t += 10_000) {
      const step = live
        .filter((o) => o.createdAt >= t && o.createdAt < Math.min(t + 10_000, w.to))
        .map((o) => o.ms);
      steps.push(step.length === 0 ? "-" : percentile(step, 99).toFixed(0));
    }
    lines.push(`  live p99 per 10 s (ms): ${steps.join(" ")}`);
  }
  return lines;
}

/** `loops-sync status --json`'s output, as an operator would read it. */
export async function readStatusJson(env: Record<string, string>): Promise<string> {
  const main = new URL("../apps/cli/src/main.ts", import.meta.url).pathname;
  const { stdout } = await promisify(execFile)(process.execPath, [main, "status", "--json"], {
    env: { ...process.env, ...env },
    maxBuffer: 64 * 2 ** 20,
  });
  return stdout;
}

interface TickRow {
  task: string;
  items: number;
  itemsDone: number;
  intervalSeconds: number | null;
  effectiveIntervalSeconds: number | null;
  overran: boolean;
}

/** Whether each trickle fits its configured interval or how far it stretched, from `status --json`. */
export function describeTrickles(statusJson: string): string[] {
  const { scheduledTicks } = JSON.parse(statusJson) as { scheduledTicks: TickRow[] };
  return scheduledTicks
    .filter((t) => t.intervalSeconds !== null && t.effectiveIntervalSeconds !== null)
    .map((t) => {
      const stretch = (t.effectiveIntervalSeconds ?? 0) / (t.intervalSeconds ?? 1);
      return (
        `trickle ${t.task}: configured ${t.intervalSeconds} s, effective ${t.effectiveIntervalSeconds} s` +
        (stretch > 1 ? ` (stretched ×${stretch.toFixed(2)}${t.overran ? ", overran" : ""})` : " (fits)") +
        `; ${t.itemsDone}/${t.items} merchants within it`
      );
    });
}
