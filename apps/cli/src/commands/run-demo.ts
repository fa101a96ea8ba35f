// `loops-sync demo`'s run, loaded by its command (demo.ts) only when it runs.
import { createLogger, createStopStack, loadEnv } from "@loops-sync/config";
import { connect, migrate, resolveDatabase, type Sql } from "@loops-sync/db";
import { LoopsClient } from "@loops-sync/loops-client";
import { startReceiver } from "@loops-sync/receiver";
import { DEFAULT_SANDBOX_CREDENTIALS, DEFAULT_WEBHOOK_SECRET, startSandbox } from "@loops-sync/sandbox";
import { type Database, kyselyOver } from "@loops-sync/schema";
import { startWorker } from "@loops-sync/worker";
import { sql as raw } from "kysely";
import { Registry } from "prom-client";
import { startAdminServer } from "../admin-server.ts";
import { type DemoForwardEndpoint, startDemoForwardEndpoint } from "../demo-forward-endpoint.ts";
import { createDemoGateway, showGatewayWrite } from "../demo-gateway.ts";
import { printMenuSales } from "../print-menu-sales.ts";
import { createProcessHealth } from "../process-health.ts";
import { untilSignal } from "../shutdown.ts";

export interface DemoOptions {
  duration: number;
  rate: number;
  port?: number;
  forward?: boolean;
  /** Edit a location through the gateway and read it back from replica.locations at once. */
  gateway?: boolean;
}

interface Progress {
  upstream: number;
  mirrored: number;
  upToDate: number;
  events: number;
}

async function measure(sql: Sql, truth: ReadonlyMap<string, number>, since: Date): Promise<Progress> {
  // Only this run's orders: an earlier demo's stay in the reused embedded database.
  const db = kyselyOver<Database>(sql);
  const rows = await db
    .selectFrom("replica.orders")
    .select(["id", "version"])
    .where("id", "=", (eb) => eb.fn.any(eb.val([...truth.keys()])))
    .execute();
  const events = await db
    .selectFrom("sync.events")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("received_at", ">=", since)
    .executeTakeFirst();
  const upToDate = rows.filter((r) => truth.get(r.id) === r.version).length;
  return { upstream: truth.size, mirrored: rows.length, upToDate, events: events?.n ?? 0 };
}

async function printMirror(sql: Sql): Promise<void> {
  const rows = await kyselyOver<Database>(sql)
    .selectFrom("replica.orders as o")
    .select(["o.id", "o.channel", "o.status", "o.version"])
    .select((eb) => [
      raw<string>`to_char(o.total_amount / 100.0, 'FM999990.00') || ' ' || coalesce(o.currency, '')`.as(
        "total",
      ),
      eb
        .selectFrom("replica.order_items as i")
        .select(eb.fn.countAll<number>().as("n"))
        .whereRef("i.order_id", "=", "o.id")
        .as("items"),
    ])
    .orderBy("o.updated_at", "desc")
    .limit(10)
    .execute();
  console.log("\nlatest mirrored orders (replica.orders):");
  console.table(rows);
}

/** Runs the sandbox, the receiver and the worker, creates orders for a while and shows the mirror. */
export async function runDemo(options: DemoOptions): Promise<void> {
  const env = loadEnv();
  const logger = createLogger({ name: "demo", level: env.LOG_LEVEL === "info" ? "warn" : env.LOG_LEVEL });
  // Each part's stop pushed as it starts; stopped last first, each failure logged.
  const stops = createStopStack({ logger });
  const database = await resolveDatabase(env, logger);
  stops.push("database", () => database.stop());
  const sql = connect(database.url, { max: 10, applicationName: "loops-sync demo" });
  stops.push("database pool", () => sql.end({ timeout: 5 }));
  try {
    await migrate(sql, database.url);
    const sandbox = await startSandbox({ port: 0 });
    stops.push("sandbox", () => sandbox.close());
    const credentials = DEFAULT_SANDBOX_CREDENTIALS;
    const receiver = await startReceiver({
      sql,
      webhookSecrets: [DEFAULT_WEBHOOK_SECRET],
      applicationId: credentials.applicationId,
      port: options.port ?? 0,
      host: "127.0.0.1",
      logger: logger.child({ name: "receiver" }),
    });
    stops.push("receiver", () => receiver.close());
    // The operator page lives on an admin listener of its own, as in `start`.
    const health = createProcessHealth({ sql, graceSeconds: 60 });
    const registry = new Registry();
    const client = new LoopsClient({
      apiUrl: sandbox.apiUrl,
      authUrl: sandbox.authUrl,
      clientId: credentials.clientId,
      clientSecret: credentials.clientSecret,
    });
    const gateway = options.gateway ? createDemoGateway(client, sql, registry) : undefined;
    const admin = await startAdminServer({ registry, health, sql, port: 0, gateway: gateway?.app });
    stops.push("admin listener", async () => {
      health.close();
      await admin.close();
    });
    sandbox.addWebhookEndpoint({
      url: `${receiver.url}/webhooks/loops`,
      secrets: [DEFAULT_WEBHOOK_SECRET],
    });
    let forwardTo: DemoForwardEndpoint | undefined;
    if (options.forward) {
      forwardTo = await startDemoForwardEndpoint((line) => console.log(line));
      const endpoint = forwardTo;
      stops.push("forward endpoint", () => endpoint.close());
    }
    const worker = await startWorker({
      databaseUrl: database.url,
      sql,
      client,
      applicationId: credentials.applicationId,
      // Known from the start, so the reconcile at start mirrors their brands, menus and locations.
      merchantIds: sandbox.merchantIds,
      logger: logger.child({ name: "worker" }),
      // As `start` does: the first catch-up backfills each merchant and sets its event-log cursor.
      catchup: { client, cron: "* * * * *", logger: logger.child({ name: "catchup" }) },
      forward: forwardTo && { url: forwardTo.url, secret: forwardTo.secret, timeoutMs: 2000 },
    });
    stops.push("worker", () => worker.stop());

    console.log(
      `loops-sync demo: sandbox ${sandbox.url}, receiver ${receiver.url}, database ${database.embedded ? "embedded" : "DATABASE_URL"}`,
    );
    console.log(`operator page: ${admin.url}/status`);
    if (forwardTo) console.log(`forwarding every change to the built-in endpoint ${forwardTo.url}`);
    console.log(`creating ${options.rate} orders/s for ${options.duration} s (Ctrl-C stops early)\n`);
    const startedAt = new Date();
    sandbox.startGenerator({ ratePerSecond: options.rate });
    // One order as a partner testing its pipeline would make it: POST /sandbox/orders, a simulated
    // channel's order whose events reach the receiver like any other.
    const sandboxOrder = await createSandboxOrder(client, sandbox.merchantIds[0]!);
    console.log(`created ${sandboxOrder} with POST /sandbox/orders`);
    if (gateway) {
      await showGatewayWrite(client, sql, {
        adminUrl: admin.url,
        token: gateway.token,
        merchantId: sandbox.merchantIds[0]!,
      });
    }
    let running = true;
    const ticker = setInterval(async () => {
      const truth = new Map(sandbox.truth.orders().map((o) => [o.id, o.version]));
      const p = await measure(sql, truth, startedAt).catch(() => undefined);
      // A tick still measuring when the run ends would print after the final summary began.
      if (p && running)
        console.log(
          `orders upstream ${p.upstream}, mirrored ${p.mirrored} (${p.upToDate} at the latest version), events stored ${p.events}`,
        );
    }, 2_000);
    const why = await untilSignal(options.duration * 1000);
    running = false;
    clearInterval(ticker);
    sandbox.stopGenerator();
    console.log(
      why === "signal"
        ? "\nstopping (Ctrl-C): letting the mirror settle"
        : "\ntime is up: letting the mirror settle",
    );
    await sandbox.flushDeliveries();
    let progress: Progress | undefined;
    for (let i = 0; i < 40; i++) {
      const truth = new Map(sandbox.truth.orders().map((o) => [o.id, o.version]));
      progress = await measure(sql, truth, startedAt);
      if (progress.upToDate === progress.upstream) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    if (forwardTo) {
      const endpoint = forwardTo;
      // Until the changes the last orders made have reached the endpoint (a few seconds at most).
      for (let i = 0; i < 40 && !(await forwardedAll(sql)); i++) await new Promise((r) => setTimeout(r, 250));
      const c = endpoint.counts();
      console.log(
        `\nforwarded ${c.received} changes to the built-in endpoint, signed (Standard Webhooks); ${c.duplicates} duplicate(s), ${c.refused} refused`,
      );
    }
    await printMirror(sql);
    await printMenuSales(sql);
    const [mirrored] = await sql<{ version: number }[]>`
      select version from replica.orders where id = ${sandboxOrder}`;
    console.log(
      mirrored
        ? `\nthe sandbox order ${sandboxOrder} (POST /sandbox/orders) is mirrored, version ${mirrored.version}`
        : `\nthe sandbox order ${sandboxOrder} (POST /sandbox/orders) is not mirrored yet`,
    );
    const p = progress!;
    console.log(
      `\nmirrored ${p.upToDate} of ${p.upstream} upstream orders at their latest version; ${p.events} events stored`,
    );
    console.log(
      "with DATABASE_URL set, the mirror stays: try `select * from reporting.daily_sales limit 5;` in psql",
    );
  } finally {
    await stops.stopAll();
  }
}

/** POST /sandbox/orders at the merchant's first location; returns the order's id. */
async function createSandboxOrder(client: LoopsClient, merchantId: string): Promise<string> {
  const api = client.forMerchant(merchantId);
  const [location] = (await api.locations.list({ limit: 1 })).data;
  if (!location) throw new Error(`the sandbox merchant ${merchantId} has no location`);
  return (await api.sandbox.createOrder({ location_id: location.id })).id;
}

/** Every change of the feed has been scanned and none waits for delivery. */
async function forwardedAll(sql: Sql): Promise<boolean> {
  const [row] = await sql<{ done: boolean }[]>`
    select not exists (select 1 from sync.forward_deliveries where dead_at is null)
      and (select scanned_through from sync.forward_progress) >= (select coalesce(max(position), 0) from replica.changes)
      as done`;
  return row?.done === true;
}
