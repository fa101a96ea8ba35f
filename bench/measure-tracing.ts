// The cost of tracing: the receiver's throughput and the freshness with OpenTelemetry off, on at 100 %
// sampling and on at 1 %, in alternating runs of the same bench (off, 100 %, 1 %, off, …), each figure
// compared with the "off" run of its own round: the machine is shared, so only same-round ratios count.
// Spans go over OTLP/HTTP protobuf to a sink in this process that counts and discards them (a collector's
// decoding is not the receiver's cost).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { BenchDatabase } from "./bench-database.ts";
import { measureFreshness } from "./measure-freshness.ts";
import { forkServer } from "./measure-receiver.ts";
import { runLoad } from "./run-load.ts";
import { createWebhookSigner } from "./webhook-signer.ts";

export const TRACING_MODES = ["off", "100%", "1%"] as const;
export type TracingMode = (typeof TRACING_MODES)[number];
const RATIO: Record<TracingMode, number | undefined> = { off: undefined, "100%": 1, "1%": 0.01 };

export interface TracingRound {
  mode: TracingMode;
  round: number;
  receiverPerSecond: number;
  receiverP99: number;
  freshnessP50?: number;
  freshnessP99?: number;
}

export interface TracingFigures {
  rounds: TracingRound[];
  /** OTLP export requests the sink received. */
  exports: number;
}

/** An OTLP/HTTP endpoint that accepts every export and only counts it. */
async function startSink() {
  let exports = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      exports++;
      response.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => exports,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function measureTracing({
  withDatabase,
  seconds,
  rounds = 2,
  freshness,
}: {
  /** Runs `fn` on a fresh database of its own (created and dropped around it). */
  withDatabase: <T>(fn: (db: BenchDatabase) => Promise<T>) => Promise<T>;
  seconds: number;
  /** Default: 2. */
  rounds?: number;
  /** Also measure freshness per mode (the receiver and worker as CLI processes, OTEL_* set). */
  freshness?: { rate: number; workerConcurrency: number; apiDelayMs: number };
}): Promise<TracingFigures> {
  const sink = await startSink();
  const signer = createWebhookSigner();
  const results: TracingRound[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const mode of TRACING_MODES) {
        const ratio = RATIO[mode];
        const row: TracingRound = { mode, round, receiverPerSecond: 0, receiverP99: 0 };
        await withDatabase(async (db) => {
          const otel: Record<string, string> =
            ratio === undefined ? {} : { BENCH_OTEL_ENDPOINT: sink.url, BENCH_OTEL_RATIO: String(ratio) };
          const server = await forkServer("receiver", signer.secret, db.url, "app_bench_tracing", otel);
          try {
            await runLoad({ url: server.url, signer, seconds: Math.min(2, seconds), connections: 100 });
            const load = await runLoad({ url: server.url, signer, seconds, connections: 100 });
            row.receiverPerSecond = load.perSecond;
            row.receiverP99 = load.p99;
          } finally {
            await server.stop();
          }
        });
        if (freshness) {
          const env: Record<string, string> =
            ratio === undefined
              ? {}
              : {
                  OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
                  OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
                  OTEL_TRACES_SAMPLER_ARG: String(ratio),
                };
          const f = await withDatabase((db) =>
            measureFreshness({ sql: db.sql, databaseUrl: db.url, seconds, ...freshness, env }),
          );
          row.freshnessP50 = f.p50;
          row.freshnessP99 = f.p99;
        }
        results.push(row);
        console.error(
          `tracing ${mode} round ${round}: receiver ${Math.round(row.receiverPerSecond)}/s` +
            (row.freshnessP50 === undefined ? "" : `, freshness p50 ${row.freshnessP50.toFixed(0)} ms`),
        );
      }
    }
  } finally {
    await sink.close();
  }
  return { rounds: results, exports: sink.exports() };
}

/** One line per mode and round, with the ratio to the same round's "off". */
export function printTracing({ rounds, exports }: TracingFigures): void {
  const fmt = (v: number | undefined, unit = "") =>
    v === undefined ? "" : `${Math.round(v).toLocaleString("en-US")}${unit}`;
  console.log(
    "\ntracing cost (same-round ratios; the machine is shared, absolute figures drift between rounds)",
  );
  console.log("mode   round  receiver/s  ×off   p99 ack   freshness p50 / p99   ×off p50");
  for (const r of rounds) {
    const off = rounds.find((o) => o.round === r.round && o.mode === "off")!;
    const x = (a: number | undefined, b: number | undefined) => (a && b ? `${(a / b).toFixed(2)}×` : "");
    console.log(
      [
        r.mode.padEnd(6),
        String(r.round).padEnd(6),
        fmt(r.receiverPerSecond).padStart(10),
        x(r.receiverPerSecond, off.receiverPerSecond).padStart(6),
        fmt(r.receiverP99, " ms").padStart(9),
        `${fmt(r.freshnessP50, " ms")} / ${fmt(r.freshnessP99, " ms")}`.padStart(21),
        x(r.freshnessP50, off.freshnessP50).padStart(9),
      ].join(" "),
    );
  }
  console.log(`OTLP exports received by the sink: ${exports}`);
}
