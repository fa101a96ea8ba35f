// The gateway's overhead: a location PATCH and a menu import sent to the sandbox directly, and through
// `loops-sync receiver`'s gateway (GATEWAY_TOKEN), alternating in one run, so both meet the same machine.
// Reports p50 and p99 of each and what the gateway adds, and in how many writes the mirror held the write's
// row when the answer arrived (read at once after each answer). Then live order freshness at the default
// budget, alternating phases without and with a backend writing through the gateway (bench/gateway-freshness.ts).
//   node bench/gateway.ts [--patches N] [--imports N] [--only overhead|freshness] [--writes-per-second 10]
//     [--import-every 5] [--phase-seconds 30] [--rounds 2] [--merchants 60] [--orders-per-second 6] [--rps 25]
//     [--json FILE]                                              (pnpm bench:gateway; DATABASE_URL or embedded)
import { writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { DEFAULT_WEBHOOK_SECRET, startSandbox } from "@loops-sync/sandbox";
import { openBenchServer } from "./bench-database.ts";
import { formatWriteLoad, measureFreshnessUnderWrites, menu } from "./gateway-freshness.ts";
import { describeMachine, formatLoad } from "./machine.ts";
import { percentile } from "./percentile.ts";
import { serviceEnv, startReceiverProcess } from "./service-processes.ts";

const { values } = parseArgs({
  options: {
    patches: { type: "string", default: "200" },
    imports: { type: "string", default: "40" },
    only: { type: "string" },
    "writes-per-second": { type: "string", default: "10" },
    "import-every": { type: "string", default: "5" },
    "phase-seconds": { type: "string", default: "30" },
    "gap-seconds": { type: "string", default: "5" },
    "warmup-seconds": { type: "string", default: "25" },
    rounds: { type: "string", default: "2" },
    merchants: { type: "string", default: "60" },
    "orders-per-second": { type: "string", default: "6" },
    rps: { type: "string", default: "25" },
    json: { type: "string" },
  },
});
if (values.only !== undefined && values.only !== "overhead" && values.only !== "freshness") {
  throw new RangeError(`--only: expected overhead or freshness, got ${values.only}`);
}
const machine = await describeMachine();
const server = await openBenchServer();
const figures: Record<string, unknown> = { machine: { cores: machine.cores, loadAtStart: machine.load } };
console.log(`${machine.cores} cores, load ${formatLoad(machine)} at the start (shared with other work)`);
if (values.only !== "freshness") figures.overhead = await measureOverhead();
if (values.only !== "overhead") {
  const writeLoad = await measureFreshnessUnderWrites(server, {
    merchants: Number(values.merchants),
    ordersPerSecond: Number(values["orders-per-second"]),
    rps: Number(values.rps),
    writesPerSecond: Number(values["writes-per-second"]),
    importEvery: Number(values["import-every"]),
    phaseSeconds: Number(values["phase-seconds"]),
    gapSeconds: Number(values["gap-seconds"]),
    warmupSeconds: Number(values["warmup-seconds"]),
    rounds: Number(values.rounds),
  });
  console.log(
    `\nlive order freshness: ${writeLoad.options.merchants} merchants, ${writeLoad.options.ordersPerSecond} new orders/s, LOOPS_MAX_RPS=${writeLoad.options.rps}; (b) adds ${writeLoad.options.writesPerSecond} gateway writes/s (every ${writeLoad.options.importEvery}th a menu import, the rest location PATCHes); ${writeLoad.options.phaseSeconds} s phases`,
  );
  for (const line of formatWriteLoad(writeLoad)) console.log(line);
  figures.freshnessUnderWrites = writeLoad;
}
(figures.machine as Record<string, unknown>).loadAtEnd = (await describeMachine()).load;
console.log(`load ${formatLoad(await describeMachine())} at the end`);
if (values.json) await writeFile(values.json, `${JSON.stringify(figures, null, 2)}\n`);
await server.close();

async function measureOverhead() {
  const TOKEN = "bench-gateway-token-0123456789";
  const db = await server.createDatabase();
  const sandbox = await startSandbox({ jobStepMs: 50 });
  const receiver = await startReceiverProcess(
    { ...serviceEnv({ databaseUrl: db.url, sandbox }), GATEWAY_TOKEN: TOKEN },
    DEFAULT_WEBHOOK_SECRET,
  );
  const gatewayLine = await receiver.process.waitForLine((l) => l.msg === "gateway listening");
  const gatewayUrl = String(gatewayLine.url);
  const { access_token: loopsToken } = (await (
    await fetch(sandbox.authUrl, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: sandbox.credentials.clientId,
        client_secret: sandbox.credentials.clientSecret,
      }),
    })
  ).json()) as { access_token: string };

  const days = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];
  const week = (minute: number) => {
    const opens = `0${Math.floor(minute / 60) % 10}:${String(minute % 60).padStart(2, "0")}`;
    return Object.fromEntries(days.map((d) => [d, [{ opens, closes: "23:00" }]]));
  };

  /** One write, timed from the request to the parsed answer. */
  async function send(base: string, bearer: string, method: string, path: string, body: unknown) {
    const started = performance.now();
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${bearer}`,
        "service-merchant-id": "mer_demo_1",
        "content-type": "application/json",
      },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as { id: string };
    if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status}`);
    return { ms: performance.now() - started, json };
  }

  const direct = { patch: [] as number[], import: [] as number[] };
  const viaGateway = { patch: [] as number[], import: [] as number[] };
  let mirrored = 0;
  let writes = 0;
  const gw = `${gatewayUrl}`;
  for (let i = 0; i < Number(values.patches); i++) {
    const hours = week(i % 600);
    direct.patch.push(
      (await send(sandbox.apiUrl, loopsToken, "PATCH", "/locations/loc_demo_1b", { opening_hours: hours }))
        .ms,
    );
    const through = await send(gw, TOKEN, "PATCH", "/locations/loc_demo_1a", { opening_hours: hours });
    viaGateway.patch.push(through.ms);
    const [row] = await db.sql<{ opens: string | null }[]>`
      select raw #>> '{opening_hours,sunday,0,opens}' as opens from replica.locations where id = 'loc_demo_1a'`;
    writes++;
    if (row?.opens === hours.sunday![0]!.opens) mirrored++;
  }
  for (let i = 0; i < Number(values.imports); i++) {
    direct.import.push(
      (await send(sandbox.apiUrl, loopsToken, "PUT", "/brands/brd_demo_1/menu", menu(i))).ms,
    );
    const through = await send(gw, TOKEN, "PUT", "/brands/brd_demo_1/menu", menu(i));
    viaGateway.import.push(through.ms);
    const [job] = await db.sql`select 1 from replica.jobs where id = ${through.json.id}`;
    writes++;
    if (job) mirrored++;
  }

  const row = (name: string, d: number[], g: number[]) => {
    const [d50, d99, g50, g99] = [percentile(d, 50), percentile(d, 99), percentile(g, 50), percentile(g, 99)];
    return `${name.padEnd(16)} n=${String(d.length).padEnd(4)} direct p50 ${d50.toFixed(1)} ms p99 ${d99.toFixed(1)} ms | gateway p50 ${g50.toFixed(1)} ms p99 ${g99.toFixed(1)} ms | added p50 ${(g50 - d50).toFixed(1)} ms p99 ${(g99 - d99).toFixed(1)} ms`;
  };
  console.log(row("location PATCH", direct.patch, viaGateway.patch));
  console.log(row("menu import PUT", direct.import, viaGateway.import));
  console.log(
    `mirror row written before the answer: ${mirrored}/${writes} (${((100 * mirrored) / writes).toFixed(1)} %)`,
  );

  await receiver.process.stop();
  await sandbox.close();
  await db.drop();
  return {
    location_patch: figuresOf(direct.patch, viaGateway.patch),
    menu_import: figuresOf(direct.import, viaGateway.import),
    mirrored_before_answer: { writes, mirrored },
  };
}

function figuresOf(direct: number[], gateway: number[]) {
  const p = (v: number[]) => ({ p50: percentile(v, 50), p99: percentile(v, 99) });
  const d = p(direct);
  const g = p(gateway);
  return {
    n: direct.length,
    direct_ms: d,
    gateway_ms: g,
    added_ms: { p50: g.p50 - d.p50, p99: g.p99 - d.p99 },
  };
}
