import { readFile } from "node:fs/promises";
import { createWorkerMetrics } from "@loops-sync/worker";
import { describe, expect, it } from "vitest";
// Not exported by the receiver package; the metric names are what this test guards.
import { createReceiverMetrics } from "../../apps/receiver/src/receiver-metrics.ts";

const root = new URL("../../", import.meta.url);
// Grafana substitutes this with the datasource picked in the dashboard's variable.
const GRAFANA_DATASOURCE_VARIABLE = ["$", "{datasource}"].join("");

async function registeredNames(): Promise<Set<string>> {
  const receiver = createReceiverMetrics({ connectionsInUse: () => 0, connectionsMax: 1, queued: () => 0 });
  const worker = createWorkerMetrics();
  const names = [
    ...(await receiver.registry.getMetricsAsJSON()),
    ...(await worker.registry.getMetricsAsJSON()),
  ].map((m) => m.name);
  return new Set(names);
}

const usedNames = (text: string) =>
  new Set([...text.matchAll(/\b(loops_sync_[a-z0-9_]+?)(_bucket|_sum|_count)?\b/g)].map((m) => m[1]!));

describe("Grafana dashboard and Prometheus alerts", () => {
  it("use only series the receiver and worker register", async () => {
    const registered = await registeredNames();
    const dashboard = await readFile(new URL("infra/grafana/loops-sync.json", root), "utf8");
    const alerts = await readFile(new URL("infra/prometheus/alerts.yml", root), "utf8");
    const used = new Set([...usedNames(dashboard), ...usedNames(alerts)]);
    expect(used.size).toBeGreaterThan(8);
    expect([...used].filter((name) => !registered.has(name))).toEqual([]);
  });

  it("is a dashboard whose panels all query the selectable Prometheus datasource", async () => {
    const dashboard = JSON.parse(await readFile(new URL("infra/grafana/loops-sync.json", root), "utf8")) as {
      uid: string;
      panels: { type: string; targets?: { expr: string; datasource: { uid: string } }[] }[];
    };
    expect(dashboard.uid).toBe("loops-sync");
    const queried = dashboard.panels.filter((p) => p.type !== "row");
    expect(queried.length).toBeGreaterThan(10);
    for (const panel of queried) {
      expect(panel.targets?.length).toBeGreaterThan(0);
      for (const t of panel.targets ?? []) expect(t.datasource.uid).toBe(GRAFANA_DATASOURCE_VARIABLE);
    }
  });
});
