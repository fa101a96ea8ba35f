import { type ChildProcess, fork } from "node:child_process";
import type { Sql } from "@loops-sync/db";
import { PRODUCT_NODE_FLAGS, readMemory } from "./cli-process.ts";
import { measureRawInserts } from "./measure-raw-inserts.ts";
import { type LoadResult, runLoad } from "./run-load.ts";
import { createWebhookSigner } from "./webhook-signer.ts";

export interface ReceiverFigures {
  bare: LoadResult;
  /** Configured as deployed: LOOPS_APPLICATION_ID set, order events queued for the order refresher. */
  receiver: LoadResult;
  /** LOOPS_APPLICATION_ID unset: every event goes into its commit's process_events job. */
  withoutApplicationId: LoadResult;
  raw: { perSecond: number; batchSize: number; concurrency: number };
  /** Events per committed transaction (sync.events rows / their distinct inserting transactions). */
  meanBatch: number;
  /** VmHWM of the receiver process after the run. */
  peakRss: number | undefined;
  /** VmHWM of the bare Hono process under the same load. */
  barePeakRss: number | undefined;
  /** Every acknowledged webhook is a stored row, and every stored row is in a job. */
  consistent: boolean;
  stored: number;
}

export interface ForkedServer {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

/** bench/receiver-server.ts (the receiver engineer's harness): the real receiver, or a bare Hono endpoint. */
export async function forkServer(
  mode: "bare" | "receiver",
  secret: string,
  databaseUrl: string,
  applicationId?: string,
  /** More environment for the child (the tracing phase's BENCH_OTEL_*). Default: none. */
  extraEnv: Record<string, string> = {},
): Promise<ForkedServer> {
  const child = fork(new URL("./receiver-server.ts", import.meta.url), [mode], {
    // The Node flags bin/loops-sync and the image start every process with, for both servers alike.
    // (BENCH_CHILD_NODE_OPTIONS replaces them, as for the other child processes.)
    execArgv: [
      ...process.execArgv,
      ...(process.env.BENCH_CHILD_NODE_OPTIONS?.split(" ").filter(Boolean) ?? PRODUCT_NODE_FLAGS),
    ],
    // The secret by environment, as the product takes it: a command line is visible to every user.
    env: {
      ...process.env,
      BENCH_DATABASE_URL: databaseUrl,
      BENCH_WEBHOOK_SECRET: secret,
      BENCH_APPLICATION_ID: applicationId ?? "",
      ...extraEnv,
    },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const next = (kind: string) =>
    new Promise<{ kind: string; url?: string }>((resolve, reject) => {
      const onMessage = (m: { kind: string; url?: string }) => {
        if (m.kind !== kind) return;
        child.off("message", onMessage);
        resolve(m);
      };
      child.on("message", onMessage);
      child.once("exit", (code) => reject(new Error(`receiver-server ${mode} exited with ${code}`)));
    });
  const { url } = await next("ready");
  return {
    child,
    url: url!,
    async stop() {
      const stopped = next("stopped");
      child.send({ kind: "stop" });
      await stopped;
    },
  };
}

/**
 * Receiver throughput: a bare Hono endpoint and the receiver under the same closed-loop load, then the
 * same rows as raw multi-row INSERTs with the receiver's own mean batch size and commit concurrency.
 */
export async function measureReceiver({
  sql,
  databaseUrl,
  seconds,
  connections = 100,
}: {
  sql: Sql;
  databaseUrl: string;
  seconds: number;
  /** Default: 100. */
  connections?: number;
}): Promise<ReceiverFigures> {
  const signer = createWebhookSigner();
  const warmup = Math.min(2, seconds);
  // As deployed, the load's merchants (bench/run-load.ts) are connected and confirmed: a merchant first
  // named by a webhook is unconfirmed, and its order events wait for GET /connection instead of being queued.
  await sql`
    insert into sync.merchants (id, learned_from)
    select 'mer_load_' || n, 'config' from generate_series(0, 19) n
    on conflict (id) do nothing`;

  /** One server under the load after a warm-up: its figures, peak RSS and, for the receiver, what it stored. */
  async function measureServer(mode: "bare" | "receiver", applicationId?: string) {
    const server = await forkServer(mode, signer.secret, databaseUrl, applicationId);
    await runLoad({ url: server.url, signer, seconds: warmup, connections });
    const before = mode === "receiver" ? await counts(sql) : undefined;
    const load = await runLoad({ url: server.url, signer, seconds, connections });
    const peakRss = (await readMemory(server.child.pid!))?.peak;
    await server.stop();
    const after = before ? await counts(sql) : undefined;
    return {
      load,
      peakRss,
      after,
      stored: before && after ? after.events - before.events : 0,
      commits: before && after ? after.commits - before.commits : 0,
    };
  }

  const { load: bare, peakRss: barePeakRss } = await measureServer("bare");
  // As deployed (README, the freshness phase): with our application id, so an order event is queued for
  // the order refresher in the same statement (a self-originated one was told apart already).
  const configured = await measureServer("receiver", "app_bench_receiver");
  const { load: receiver, peakRss, stored } = configured;
  const meanBatch = stored / Math.max(1, configured.commits);
  // Without it, every event goes into its commit's process_events job (graphile_worker.add_job). No worker
  // runs here, so those jobs pile up as they would behind a stopped worker.
  const plain = await measureServer("receiver");
  const withoutApplicationId = plain.load;

  // The same rows without the HTTP server, as many commits at once as the receiver's group commit.
  const batchSize = Math.max(1, Math.round(meanBatch));
  const concurrency = Number(process.env.BENCH_COMMITS || 1);
  const raw = await measureRawInserts({ sql, batchSize, concurrency, seconds });

  for (const [name, load] of Object.entries({ bare, receiver, withoutApplicationId })) {
    if (load.signedDuringRun > 0) {
      console.warn(
        `receiver phase: ${load.signedDuringRun} requests to ${name} were signed during the timed run (the pre-signed pool ran out; raise BENCH_PRESIGNED_PER_SECOND)`,
      );
    }
  }
  return {
    bare,
    receiver,
    withoutApplicationId,
    raw: { ...raw, batchSize, concurrency },
    meanBatch,
    peakRss,
    barePeakRss,
    // Requests in flight when the load stops are stored but not counted as 2xx: >= is the check.
    consistent:
      stored >= receiver.ok &&
      plain.stored >= withoutApplicationId.ok &&
      plain.after !== undefined &&
      plain.after.enqueued === plain.after.webhookEvents,
    stored,
  };
}

async function counts(sql: Sql) {
  const [row] = await sql<{ events: number; webhookEvents: number; enqueued: number; commits: number }[]>`
    select (select count(*)::int from sync.events) as events,
           -- One receiver commit is one transaction: the inserting transaction ids of the rows.
           (select count(distinct xmin::text)::int from sync.events) as commits,
           (select count(*)::int from sync.events where source = 'webhook') as "webhookEvents",
           -- Handed to the worker: named in a process_events job, or (order events) a row of the order
           -- refresh queue each.
           (select coalesce(sum(jsonb_array_length(payload::jsonb -> 'eventIds')), 0)::int
              from graphile_worker._private_jobs j
              join graphile_worker._private_tasks t on t.id = j.task_id
             where t.identifier = 'process_events')
           + (select count(*)::int from sync.order_refresh) as enqueued`;
  return row!;
}
