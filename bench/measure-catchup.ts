import type { Sql } from "@loops-sync/db";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { readMemory, startCliProcess } from "./cli-process.ts";
import { serviceEnv, startWorkerProcess } from "./service-processes.ts";

export interface CatchupFigures {
  events: number;
  orders: number;
  apiDelayMs: number;
  /** From starting `loops-sync catchup` to the last event settled (outcome no longer pending). */
  wallSeconds: number;
  /** The catch-up command alone (reading, storing, list refresh), without the worker's tail. */
  commandSeconds: number;
  eventsPerSecond: number;
  /** Every API request the sandbox saw during the phase (token, event pages, order lists, single orders). */
  apiCalls: number;
  callsPerEvent: number;
  /** One GET /orders/{id} per event plus the event pages: what a naive catch-up would spend. */
  naiveCallsPerEvent: number;
  /** Calls by route, for the README. */
  calls: Record<string, number>;
  outcomes: Record<string, number>;
  /** The replica holds every order at the sandbox's version afterwards. */
  replicaMatches: boolean;
  workerPeakRss: number | undefined;
  catchupPeakRss: number | undefined;
}

export interface CatchupOptions {
  sql: Sql;
  databaseUrl: string;
  events: number;
  orders: number;
  workerConcurrency: number;
  /** Default: 20 ms for every API answer, as in the freshness phase. */
  apiDelayMs?: number;
  /** Give up waiting for the worker's tail after this long. Default: 300 000 ms. */
  timeoutMs?: number;
}

/**
 * Recovery from an outage: the merchants were synced once (cursor and backfill checkpoint exist), then
 * `events` order events of `orders` orders happen upstream while no webhook arrives. Measured: the real
 * `loops-sync catchup` command plus a running worker, until every missed event is settled.
 */
export async function measureCatchup({
  sql,
  databaseUrl,
  events,
  orders,
  workerConcurrency,
  apiDelayMs = 20,
  timeoutMs = 300_000,
}: CatchupOptions): Promise<CatchupFigures> {
  const sandbox = await startSandbox({ port: 0, faults: { apiSlowRate: 1, apiSlowMs: apiDelayMs } });
  const env = serviceEnv({ databaseUrl, sandbox });
  const worker = await startWorkerProcess(env, { concurrency: workerConcurrency, poolSize: 10 }).catch(
    async (error: unknown) => {
      // The sandbox would keep the bench alive forever.
      await sandbox.close();
      throw error;
    },
  );
  try {
    // Synced before the outage: one order each, caught up, so every merchant has a cursor and a checkpoint.
    for (const merchantId of sandbox.merchantIds) sandbox.createOrder({ merchantId });
    await runCatchupCommand(env);
    await waitUntilSettled(sql, timeoutMs);

    makeBacklog(sandbox, events, orders);
    const statsBefore = sandbox.stats();
    const started = performance.now();
    const command = await runCatchupCommand(env);
    const commandSeconds = (performance.now() - started) / 1000;
    await waitUntilSettled(sql, timeoutMs);
    const wallSeconds = (performance.now() - started) / 1000;
    const statsAfter = sandbox.stats();

    const calls: Record<string, number> = {
      "POST /oauth/token": statsAfter.tokenRequests - statsBefore.tokenRequests,
    };
    for (const [route, n] of Object.entries(statsAfter.apiCalls)) {
      const delta = n - (statsBefore.apiCalls[route] ?? 0);
      if (delta > 0) calls[route] = delta;
    }
    const apiCalls = Object.values(calls).reduce((a, b) => a + b, 0);
    const outcomes = Object.fromEntries(
      (
        await sql<{ outcome: string; n: number }[]>`
          select outcome, count(*)::int as n from sync.events where source = 'catchup' group by outcome`
      ).map((r) => [r.outcome, r.n]),
    );
    const workerPeakRss = (await readMemory(worker.process.pid))?.peak;
    return {
      events,
      orders,
      apiDelayMs,
      wallSeconds,
      commandSeconds,
      eventsPerSecond: events / wallSeconds,
      apiCalls,
      callsPerEvent: apiCalls / events,
      naiveCallsPerEvent: (events + Math.ceil(events / 100)) / events,
      calls,
      outcomes,
      replicaMatches: await replicaMatchesTruth(sql, sandbox),
      workerPeakRss,
      catchupPeakRss: command.peakRss,
    };
  } finally {
    await worker.process.stop();
    await sandbox.close();
  }
}

/** Orders are placed first, then moved a step at a time, so each order's events lie far apart in the log. */
function makeBacklog(sandbox: Sandbox, events: number, orders: number): void {
  const ids: string[] = [];
  for (let i = 0; i < orders; i++) {
    ids.push(sandbox.createOrder({ merchantId: sandbox.merchantIds[i % sandbox.merchantIds.length]! }).id);
  }
  let made = orders;
  while (made < events) {
    for (const id of ids) {
      if (made >= events) break;
      sandbox.advanceOrder(id);
      made++;
    }
  }
}

/** runCatchup in a process of its own (bench/catchup-child.ts), as `loops-sync catchup` runs it. */
async function runCatchupCommand(env: Record<string, string>): Promise<{ peakRss: number | undefined }> {
  const command = startCliProcess(["catchup"], env, new URL("./catchup-child.ts", import.meta.url).pathname);
  let peakRss: number | undefined;
  // VmHWM is gone with the process: sample it while it runs.
  const sampler = setInterval(() => {
    void readMemory(command.pid).then((m) => {
      if (m) peakRss = Math.max(peakRss ?? 0, m.peak);
    });
  }, 100);
  const code = await command.exited;
  clearInterval(sampler);
  if (process.env.BENCH_VERBOSE)
    console.error(JSON.stringify(command.lines.find((l) => l.msg === "catchup result")));
  if (code !== 0) {
    const tail = command.lines
      .slice(-5)
      .map((l) => JSON.stringify(l))
      .join("\n");
    throw new Error(`loops-sync catchup exited with ${code}:\n${tail}`);
  }
  return { peakRss };
}

async function waitUntilSettled(sql: Sql, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const [row] = await sql<{ open: number }[]>`
      select count(*)::int as open from sync.events where outcome in ('pending', 'failed')`;
    if (row!.open === 0) return;
    if (performance.now() > deadline)
      throw new Error(`catch-up: ${row!.open} events still open after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function replicaMatchesTruth(sql: Sql, sandbox: Sandbox): Promise<boolean> {
  const truth = new Map(sandbox.truth.orders().map((o) => [o.id, o.version]));
  const rows = await sql<{ id: string; version: number }[]>`select id, version from replica.orders`;
  return rows.length === truth.size && rows.every((r) => truth.get(r.id) === r.version);
}
