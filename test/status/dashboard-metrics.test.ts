// Every series a Grafana panel or a Prometheus alert rule reads is exported by the real processes: a
// `loops-sync receiver` and a `loops-sync worker` are started against the sandbox, fed webhooks, and scraped
// on their admin listeners.
import { readFile } from "node:fs/promises";
import {
  DEFAULT_SANDBOX_CREDENTIALS,
  DEFAULT_WEBHOOK_SECRET,
  type Sandbox,
  startSandbox,
} from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { adminUrlOf, loopsSyncEnv, ProcessGroup, receiverUrlOf } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { declaredSeries, seriesIn } from "../support/promql-series.ts";
import { parseExposition, sampleValue } from "../support/scrape.ts";

const root = new URL("../../", import.meta.url);
// Grafana substitutes this with the datasource picked in the dashboard's variable.
const GRAFANA_DATASOURCE_VARIABLE = ["$", "{datasource}"].join("");
/** Series Prometheus makes itself for every target; checked against the scrape configuration instead. */
const SYNTHETIC = new Set(["up"]);

interface Dashboard {
  uid: string;
  panels: { type: string; title: string; targets?: { expr: string; datasource: { uid: string } }[] }[];
}
interface Rules {
  groups: { rules: { alert: string; expr: string }[] }[];
}

const read = async (file: string) => readFile(new URL(file, root), "utf8");

/** Each series a panel or a rule reads, with the first reader's name. */
async function seriesRead(): Promise<Map<string, string>> {
  const dashboard = JSON.parse(await read("infra/grafana/loops-sync.json")) as Dashboard;
  const rules = parse(await read("infra/prometheus/alerts.yml")) as Rules;
  const readers = new Map<string, string>();
  const note = (expr: string, reader: string) => {
    for (const name of seriesIn(expr)) if (!readers.has(name)) readers.set(name, reader);
  };
  for (const panel of dashboard.panels)
    for (const t of panel.targets ?? []) note(t.expr, `panel "${panel.title}"`);
  for (const rule of rules.groups.flatMap((g) => g.rules)) note(rule.expr, `alert ${rule.alert}`);
  return readers;
}

describe("Grafana dashboard and Prometheus alerts against the running processes", () => {
  const procs = new ProcessGroup();
  let db: TestDatabase;
  let sandbox: Sandbox;
  const exposition: Record<"receiver" | "worker", string> = { receiver: "", worker: "" };

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0 });
    const env = loopsSyncEnv({
      databaseUrl: db.url,
      api: sandbox,
      credentials: DEFAULT_SANDBOX_CREDENTIALS,
      webhookSecrets: [DEFAULT_WEBHOOK_SECRET],
      extra: { LOOPS_MERCHANT_IDS: sandbox.merchantIds.join(",") },
    });
    const receiver = procs.spawn({ name: "dashboard-receiver", args: ["receiver"], env });
    const worker = procs.spawn({ name: "dashboard-worker", args: ["worker"], env });
    const receiverUrl = await receiverUrlOf(receiver);
    const admins = { receiver: await adminUrlOf(receiver), worker: await adminUrlOf(worker) };
    await worker.waitForLine(/"msg":"worker started"/);
    sandbox.addWebhookEndpoint({ url: `${receiverUrl}/webhooks/loops`, secrets: [DEFAULT_WEBHOOK_SECRET] });
    const orders = sandbox.merchantIds.map((merchantId) => sandbox.createOrder({ merchantId }));
    for (const o of orders) sandbox.advanceOrder(o.id);
    await waitFor(
      async () => {
        const [row] = await db.sql<
          { n: number }[]
        >`select count(*)::int as n from replica.orders where version = 2`;
        return row!.n === orders.length;
      },
      { timeoutMs: 30_000, what: "every order at version 2 in the replica" },
    );
    // One unsigned request, so the rejection series has a sample too.
    await fetch(`${receiverUrl}/webhooks/loops`, { method: "POST", body: "{}" });
    for (const kind of ["receiver", "worker"] as const) {
      exposition[kind] = await (await fetch(`${admins[kind]}/metrics`)).text();
    }
  }, 90_000);
  afterAll(async () => {
    await procs.killAll();
    await sandbox?.close();
    await db?.drop();
  }, 30_000);

  it("reads only series that a receiver or a worker exports", async () => {
    const exported = new Set([...declaredSeries(exposition.receiver), ...declaredSeries(exposition.worker)]);
    const read = await seriesRead();
    expect(read.size).toBeGreaterThan(20);
    const missing = [...read].filter(([name]) => !SYNTHETIC.has(name) && !exported.has(name));
    expect(missing.map(([name, reader]) => `${name} (read by ${reader})`)).toEqual([]);
  });

  it("finds process_*, the build and the backlog in each process kind", () => {
    for (const kind of ["receiver", "worker"] as const) {
      const samples = parseExposition(exposition[kind]);
      expect([kind, sampleValue(samples, "process_resident_memory_bytes")! > 0]).toEqual([kind, true]);
      expect([kind, samples.some((s) => s.name === "loops_sync_build_info" && s.labels.version)]).toEqual([
        kind,
        true,
      ]);
      // Webhooks may still arrive meanwhile: the exact figures are checked in backlog-metrics.test.ts.
      expect([kind, typeof sampleValue(samples, "loops_sync_events_pending")]).toEqual([kind, "number"]);
      expect([
        kind,
        sampleValue(samples, "loops_sync_events_first_arrived_last_hour", { source: "webhook" })! > 0,
      ]).toEqual([kind, true]);
      for (const merchant of sandbox.merchantIds) {
        const since = sampleValue(samples, "loops_sync_merchant_webhook_last_received_seconds", { merchant });
        expect([kind, merchant, since! >= 0 && since! < 120]).toEqual([kind, merchant, true]);
      }
    }
  });

  it("has Prometheus label every target with the component the up{component} panels and alerts read", async () => {
    const config = parse(await read("infra/prometheus/prometheus.yml")) as {
      scrape_configs: {
        job_name: string;
        static_configs?: { labels?: { component?: string } }[];
        dns_sd_configs?: unknown[];
        relabel_configs?: { target_label?: string; replacement?: string }[];
      }[];
    };
    const components = new Set(
      config.scrape_configs.flatMap((job) => [
        ...(job.static_configs ?? []).map((c) => c.labels?.component),
        ...(job.relabel_configs ?? [])
          .filter((r) => r.target_label === "component")
          .map((r) => r.replacement ?? "from-pod-label"),
      ]),
    );
    for (const component of ["receiver", "worker"]) expect(components).toContain(component);
  });

  it("is a dashboard whose panels all query the selectable Prometheus datasource", async () => {
    const dashboard = JSON.parse(await read("infra/grafana/loops-sync.json")) as Dashboard;
    expect(dashboard.uid).toBe("loops-sync");
    const queried = dashboard.panels.filter((p) => p.type !== "row");
    expect(queried.length).toBeGreaterThan(10);
    for (const panel of queried) {
      expect(panel.targets?.length).toBeGreaterThan(0);
      for (const t of panel.targets ?? []) expect(t.datasource.uid).toBe(GRAFANA_DATASOURCE_VARIABLE);
    }
  });
});
