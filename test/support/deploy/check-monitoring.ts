// Checks the compose `monitoring` profile against infra/prometheus and infra/grafana without running them:
// Prometheus mounts its config and rules and discovers every serving loops-sync service by DNS on its admin
// port (so each scaled container is a target), Grafana gets the datasource and the dashboard where the
// provisioning files look, and nothing of it is published beyond loopback.
import {
  adminPortOf,
  type ComposeFile,
  type ComposeService,
  resolvedEnvironment,
  SERVING_VERBS,
} from "./check-compose.ts";
import { interpolate } from "./compose-interpolation.ts";
import type { DeployContract } from "./deploy-contract.ts";

export interface PrometheusConfig {
  rule_files?: string[];
  scrape_configs?: {
    job_name: string;
    metrics_path?: string;
    dns_sd_configs?: { names?: string[]; type?: string; port?: number }[];
    static_configs?: { targets?: string[] }[];
  }[];
}
export interface GrafanaProvisioning {
  /** infra/grafana/provisioning/datasources/*.yml */
  datasources: { datasources?: { type?: string; url?: string }[] };
  /** infra/grafana/provisioning/dashboards/*.yml */
  dashboards: { providers?: { options?: { path?: string } }[] };
}

const words = (c: ComposeService["command"]) => (typeof c === "string" ? c.split(/\s+/) : (c ?? []));
/** `./infra/x:/etc/y:ro` → ["./infra/x", "/etc/y"]. */
const mounts = (s: ComposeService | undefined) => (s?.volumes ?? []).map((v) => v.split(":").slice(0, 2));

/** Every inconsistency found; empty when the profile would scrape every process and show the dashboard. */
export function findMonitoringProblems(
  compose: ComposeFile,
  prometheus: PrometheusConfig,
  grafana: GrafanaProvisioning,
  contract: DeployContract,
): string[] {
  const problems: string[] = [];
  const services = compose.services ?? {};
  const { prometheus: prom, grafana: graf } = services;
  for (const [name, s] of [
    ["prometheus", prom],
    ["grafana", graf],
  ] as const) {
    if (!s) problems.push(`no ${name} service`);
    else if (!s.profiles?.includes("monitoring")) problems.push(`${name}: not under the monitoring profile`);
  }
  const configDir = mounts(prom).find(([from]) => from === "./infra/prometheus")?.[1];
  if (!configDir) problems.push("prometheus: does not mount ./infra/prometheus");
  else if (!words(prom?.command).includes(`--config.file=${configDir}/prometheus.yml`)) {
    problems.push(`prometheus: --config.file is not ${configDir}/prometheus.yml`);
  }
  if (!prometheus.rule_files?.includes("alerts.yml"))
    problems.push("prometheus.yml: does not load alerts.yml");

  const discovered = (prometheus.scrape_configs ?? []).flatMap((job) =>
    (job.dns_sd_configs ?? []).flatMap((sd) =>
      (sd.names ?? []).map((n) => ({ name: n, port: sd.port, job })),
    ),
  );
  for (const [name, s] of Object.entries(services)) {
    if (!SERVING_VERBS.has(words(s.command)[0] ?? "") || s.profiles?.length) continue;
    const port = adminPortOf(resolvedEnvironment(s), contract);
    const target = discovered.find((d) => d.name === name);
    if (!target)
      problems.push(`prometheus.yml: ${name} is not discovered by DNS (a static target scrapes one of N)`);
    else if (target.port !== port)
      problems.push(`prometheus.yml: scrapes ${name} on ${target.port}, its admin port is ${port}`);
    else if ((target.job.metrics_path ?? "/metrics") !== "/metrics")
      problems.push(`prometheus.yml: ${name} path is not /metrics`);
  }

  const datasource = grafana.datasources.datasources?.[0];
  if (datasource?.type !== "prometheus" || !datasource.url?.includes("//prometheus:")) {
    problems.push("grafana: the provisioned datasource is not the prometheus service");
  }
  const dashboardDir = grafana.dashboards.providers?.[0]?.options?.path;
  const graphMounts = mounts(graf);
  if (
    !graphMounts.some(
      ([from, to]) => from === "./infra/grafana/provisioning" && to === "/etc/grafana/provisioning",
    )
  ) {
    problems.push("grafana: does not mount ./infra/grafana/provisioning at /etc/grafana/provisioning");
  }
  if (
    !graphMounts.some(
      ([from, to]) => from === "./infra/grafana/loops-sync.json" && to?.startsWith(`${dashboardDir}/`),
    )
  ) {
    problems.push(`grafana: the dashboard is not mounted under ${dashboardDir}, where provisioning looks`);
  }
  for (const [name, s] of [
    ["prometheus", prom],
    ["grafana", graf],
  ] as const) {
    for (const spec of s?.ports ?? []) {
      if (!interpolate(spec).startsWith("127.0.0.1:"))
        problems.push(`${name}: publishes ${spec} beyond loopback`);
    }
    if (s && resolvedEnvironment(s).GF_AUTH_ANONYMOUS_ENABLED === "true")
      problems.push(`${name}: anonymous access`);
  }
  return problems;
}
