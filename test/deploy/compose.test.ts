// biome-ignore-all lint/suspicious/noTemplateCurlyInString: compose interpolation (${X:-d}) is what these tests are about
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  type ComposeFile,
  findComposeProblems,
  resolvedEnvironment,
} from "../support/deploy/check-compose.ts";
import {
  findMonitoringProblems,
  type GrafanaProvisioning,
  type PrometheusConfig,
} from "../support/deploy/check-monitoring.ts";
import {
  interpolate,
  interpolatedNames,
  RequiredVariableError,
} from "../support/deploy/compose-interpolation.ts";
import {
  type DeployContract,
  readDeployContract,
  SECRET_ENV_NAMES,
} from "../support/deploy/deploy-contract.ts";
import { parseYamlDocuments, REPO_ROOT } from "../support/deploy/read-yaml.ts";

const text = readFileSync(path.join(REPO_ROOT, "docker-compose.yml"), "utf8");
const load = (source: string) => parseYamlDocuments(source, "docker-compose.yml")[0] as ComposeFile;
const compose = load(text);
const words = (c: string | string[] | undefined) => (typeof c === "string" ? c.split(/\s+/) : (c ?? []));

const contract: DeployContract = readDeployContract();
// biome-ignore lint/suspicious/noExplicitAny: each caller names the shape it reads
const readYaml = (file: string): any =>
  parseYamlDocuments(readFileSync(path.join(REPO_ROOT, file), "utf8"))[0];
const grafana = (): GrafanaProvisioning => ({
  datasources: readYaml("infra/grafana/provisioning/datasources/prometheus.yml"),
  dashboards: readYaml("infra/grafana/provisioning/dashboards/loops-sync.yml"),
});

describe("docker-compose.yml", () => {
  it("is one valid YAML document with postgres, migrate, receiver, worker, a sandbox, monitoring and tracing profiles", () => {
    expect(parseYamlDocuments(text)).toHaveLength(1);
    expect(Object.keys(compose.services ?? {}).sort()).toEqual([
      "grafana",
      "jaeger",
      "migrate",
      "otel-collector",
      "postgres",
      "prometheus",
      "receiver",
      "sandbox",
      "worker",
    ]);
    expect(compose.services?.sandbox?.profiles).toEqual(["sandbox"]);
    expect(compose.services?.prometheus?.profiles).toEqual(["monitoring"]);
    expect(compose.services?.grafana?.profiles).toEqual(["monitoring"]);
    expect(compose.services?.["otel-collector"]?.profiles).toEqual(["tracing"]);
    expect(compose.services?.jaeger?.profiles).toEqual(["tracing"]);
  });

  it("has a tracing profile whose collector takes the services' OTLP/HTTP and hands it to Jaeger", () => {
    const config = readYaml("infra/otel-collector/config.yaml") as {
      receivers: { otlp: { protocols: { http: { endpoint: string } } } };
      exporters: { otlp: { endpoint: string } };
      service: { pipelines: { traces: { receivers: string[]; exporters: string[] } } };
    };
    // The endpoint the profile's comment tells operators to set: the collector's OTLP/HTTP port.
    expect(text).toContain("OTEL_EXPORTER_OTLP_ENDPOINT=http://otel-collector:4318");
    expect(config.receivers.otlp.protocols.http.endpoint).toBe("0.0.0.0:4318");
    expect(config.service.pipelines.traces).toMatchObject({ receivers: ["otlp"], exporters: ["otlp"] });
    const [host] = config.exporters.otlp.endpoint.split(":");
    expect(Object.keys(compose.services ?? {})).toContain(host);
    // Off unless set: the default services export nothing.
    const env = compose["x-loops-sync-env"] as Record<string, string>;
    expect(interpolate(env.OTEL_EXPORTER_OTLP_ENDPOINT!)).toBe("");
  });

  it("publishes no admin port, and only the webhook port of the default services", () => {
    const published = Object.entries(compose.services ?? {})
      .filter(([, s]) => !s.profiles?.length)
      .flatMap(([name, s]) => (s.ports ?? []).map((p) => `${name} ${interpolate(p)}`));
    expect(published).toEqual(["receiver 8080:8080"]);
  });

  it("has a monitoring profile that scrapes every scaled worker and provisions the dashboard", () => {
    expect(
      findMonitoringProblems(compose, readYaml("infra/prometheus/prometheus.yml"), grafana(), contract),
    ).toEqual([]);
  });

  it.each([
    [
      "a static worker target (one of N scraped)",
      "- names: [worker]",
      "- names: [worker-1]",
      /worker is not discovered by DNS/,
    ],
    [
      "scraping the webhook port",
      "port: 9091\n        refresh_interval: 15s\n    relabel_configs:\n      - target_label: component\n        replacement: worker",
      "port: 8080\n        refresh_interval: 15s\n    relabel_configs:\n      - target_label: component\n        replacement: worker",
      /scrapes worker on 8080, its admin port is 9091/,
    ],
  ])("names a monitoring regression: %s", (_name, from, to, problem) => {
    const source = readFileSync(path.join(REPO_ROOT, "infra/prometheus/prometheus.yml"), "utf8");
    const fromText = from.replaceAll("\\n", "\n");
    expect(source).toContain(fromText);
    const edited = parseYamlDocuments(
      source.replace(fromText, to.replaceAll("\\n", "\n")),
    )[0] as PrometheusConfig;
    expect(findMonitoringProblems(compose, edited, grafana(), contract).join("\n")).toMatch(problem);
  });

  it("agrees with the code: verbs, flags, env names, ports, health routes, dependencies", () => {
    expect(findComposeProblems(compose, contract)).toEqual([]);
  });

  it("gives Postgres enough connections for 1 receiver, 3 workers and 2 CLI commands (docs/scaling.md)", () => {
    const services = compose.services ?? {};
    const pool = (name: string) => Number(resolvedEnvironment(services[name]!).DATABASE_POOL_SIZE);
    const concurrency = Number(resolvedEnvironment(services.worker!).WORKER_CONCURRENCY);
    // A worker process: its own pool plus graphile-worker's (concurrency + 2, apps/worker/src/start-worker.ts).
    const needed = pool("receiver") + 3 * (pool("worker") + concurrency + 2) + 2 * pool("migrate");
    const setting = interpolate(
      words(services.postgres?.command).find((w) => w.startsWith("max_connections=")) ?? "",
    );
    const max = Number(setting.split("=")[1]);
    const superuserReserved = 3;
    expect(needed).toBe(90);
    expect(max - superuserReserved).toBeGreaterThanOrEqual(Math.ceil(needed * 1.2));
  });

  it("writes no secret value: each one is interpolated from the host environment or .env", () => {
    expect(text).not.toMatch(/whsec_[A-Za-z0-9+/=]{4,}/);
    const app = compose.services?.receiver?.environment ?? {};
    for (const name of SECRET_ENV_NAMES) {
      expect(String(app[name]), name).toContain("${");
    }
    expect(interpolatedNames(String(app.LOOPS_CLIENT_SECRET))).toEqual(["LOOPS_CLIENT_SECRET"]);
  });

  // Plausible regressions, each written as the edit someone might make; the checker must name it.
  it.each([
    [
      "a renamed verb",
      'command: ["receiver", "--no-migrate"]',
      'command: ["serve", "--no-migrate"]',
      /receiver: command serve is not a loops-sync verb/,
    ],
    [
      "a flag the verb lacks",
      '"receiver", "--no-migrate"',
      '"receiver", "--skip-migrate"',
      /receiver has no flag --skip-migrate/,
    ],
    [
      "an env name the schema lacks",
      "  WORKER_CONCURRENCY: ${",
      "  WORKERS: ${",
      /WORKERS is not in the environment schema/,
    ],
    [
      "an env value the schema rejects",
      "${LOG_LEVEL:-info}",
      "${LOG_LEVEL:-verbose}",
      /LOG_LEVEL: got "verbose"/,
    ],
    [
      "a health path the receiver lacks",
      "8080/readyz",
      "8080/ready",
      /health check calls \/ready, not a receiver route/,
    ],
    [
      "a health check on the wrong port",
      "127.0.0.1:8080/readyz",
      "127.0.0.1:3000/readyz",
      /calls port 3000, the receiver listens on 8080 \(PORT\)/,
    ],
    [
      "a published port the receiver does not use",
      ':-8080}:8080"',
      ':-8080}:9090"',
      /publishes .*:9090, the receiver listens on 8080/,
    ],
    [
      "a worker that cannot scale",
      'command: ["worker"]',
      'command: ["worker"]\n    container_name: loops-sync-worker',
      /stops --scale worker=3/,
    ],
    [
      "no wait for migrations",
      "condition: service_completed_successfully\n\n  worker",
      "condition: service_started\n\n  worker",
      /receiver: does not wait for the migrate service/,
    ],
    [
      "a sandbox URL on the wrong port",
      "http://sandbox:4010/v1",
      "http://sandbox:4011/v1",
      /LOOPS_API_URL calls sandbox:4011, which listens on 4010/,
    ],
    [
      "sandbox webhooks to a path the receiver lacks",
      "http://receiver:8080/webhooks/loops",
      "http://receiver:8080/webhook",
      /sandbox: command posts to \/webhook, which the receiver does not serve/,
    ],
    [
      "sandbox webhooks to the wrong port",
      "http://receiver:8080/webhooks/loops",
      "http://receiver:80/webhooks/loops",
      /sandbox: command calls receiver:80, which listens on 8080/,
    ],
    [
      "a database user that does not exist",
      "postgres://loops_sync:",
      "postgres://loops:",
      /DATABASE_URL logs in as loops, not loops_sync/,
    ],
    [
      "a literal secret",
      "LOOPS_CLIENT_SECRET: ${LOOPS_CLIENT_SECRET:-}",
      "LOOPS_CLIENT_SECRET: hunter2",
      /LOOPS_CLIENT_SECRET is written in the file/,
    ],
  ])("names a regression: %s", (_, from, to, problem) => {
    expect(text).toContain(from);
    expect(findComposeProblems(load(text.replace(from, to)), contract).join("\n")).toMatch(problem);
  });

  it("fails when the code renames a verb, an env name or a route", () => {
    const verbs = new Map(contract.verbs);
    verbs.delete("worker");
    const renamed: DeployContract = {
      ...contract,
      verbs,
      envNames: new Set([...contract.envNames].filter((n) => n !== "CATCHUP_CRON")),
      receiverGetPaths: new Set([...contract.receiverGetPaths].filter((p) => p !== "/readyz")),
    };
    const problems = findComposeProblems(compose, renamed).join("\n");
    expect(problems).toMatch(/worker: command worker is not a loops-sync verb/);
    expect(problems).toMatch(/CATCHUP_CRON is not in the environment schema/);
    expect(problems).toMatch(/calls \/readyz, not a receiver route/);
  });
});

describe("compose interpolation", () => {
  it("resolves defaults, required values and escapes as compose does", () => {
    expect(interpolate("${A:-x} ${B-y} $$C ${D}")).toBe("x y $C ");
    expect(interpolate("${A:-x}", { A: "" })).toBe("x");
    expect(interpolate("${A-x}", { A: "" })).toBe("");
    expect(interpolate("${A:-x}", { A: "set" })).toBe("set");
    expect(() => interpolate("${A:?set A in .env}")).toThrow(RequiredVariableError);
  });
});
