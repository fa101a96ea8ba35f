// Checks docker-compose.yml against the code without a Docker engine: services reference each
// other correctly, every loops-sync service runs a real verb with real flags and real env names,
// health checks call real receiver routes on the right port, and workers can be scaled.
import { ConfigError, loadEnv } from "@loops-sync/config";
import { interpolate } from "./compose-interpolation.ts";
import { type DeployContract, SECRET_ENV_NAMES } from "./deploy-contract.ts";
import { healthUrlsIn } from "./health-urls.ts";

export interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null>;
  ports?: string[];
  healthcheck?: { test?: string | string[]; disable?: boolean };
  depends_on?: Record<string, { condition?: string; required?: boolean }>;
  profiles?: string[];
  container_name?: string;
  restart?: string;
  volumes?: string[];
}
export interface ComposeFile {
  services?: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
  [key: string]: unknown;
}

const TOP_LEVEL = new Set(["name", "services", "volumes", "networks", "configs", "secrets"]);
const CONDITIONS = new Set(["service_started", "service_healthy", "service_completed_successfully"]);
const MIGRATING_VERBS = new Set(["receiver", "worker", "start"]);
/** Verbs that run an admin listener (and, for receiver and start, the webhook listener). */
export const SERVING_VERBS = new Set(["receiver", "worker", "start"]);
/** The Dockerfile whose image runs `loops-sync`. */
export const APP_DOCKERFILE = "infra/Dockerfile";

const isApp = (s: ComposeService) => typeof s.build === "object" && s.build.dockerfile === APP_DOCKERFILE;
const words = (c: ComposeService["command"]) => (typeof c === "string" ? c.split(/\s+/) : (c ?? []));
const hasHealthcheck = (s: ComposeService | undefined) => !!s?.healthcheck?.test && !s.healthcheck.disable;
const flagValue = (command: string[], flag: string) =>
  command.includes(flag) ? command[command.indexOf(flag) + 1] : undefined;

/** The environment a service's container gets when nothing is set on the host. */
export function resolvedEnvironment(service: ComposeService): Record<string, string> {
  return Object.fromEntries(
    Object.entries(service.environment ?? {}).map(([k, v]) => [k, interpolate(String(v ?? ""))]),
  );
}

/** `"8080"`, `"${X:-8080}:8080"`, `"127.0.0.1:8080:8080"` → host and container ports. */
export function parsePort(spec: string): { host: string | undefined; container: number } {
  const parts = interpolate(spec).split(":");
  return { host: parts.length > 1 ? parts.at(-2) : undefined, container: Number(parts.at(-1)) };
}

/** The admin port a service's environment gives its process (ADMIN_PORT, then METRICS_PORT, then the default). */
export function adminPortOf(env: Record<string, string>, c: DeployContract): number {
  return Number(env.ADMIN_PORT || env.METRICS_PORT || c.defaultAdminPort);
}

/**
 * Health checks call real routes on the listener that serves them; only the webhook port is published; the
 * admin listener answers on the compose network (not loopback, or Prometheus cannot reach it).
 */
function checkListeners(
  name: string,
  verb: string,
  s: ComposeService,
  env: Record<string, string>,
  c: DeployContract,
): string[] {
  const problems: string[] = [];
  const webhooks = verb !== "worker";
  const port = Number(env.PORT ?? c.defaultPort);
  const admin = adminPortOf(env, c);
  const urls = healthUrlsIn(words(s.healthcheck?.test).join(" "));
  if (!hasHealthcheck(s) || urls.length === 0) problems.push(`${name}: no HTTP health check`);
  for (const url of urls) {
    const listener = url.port === admin ? "admin" : webhooks && url.port === port ? "receiver" : undefined;
    const routes = listener === "admin" ? c.adminGetPaths : c.receiverGetPaths;
    if (!listener) {
      const ports = webhooks ? `${port} (PORT) and ${admin} (ADMIN_PORT)` : `${admin} (ADMIN_PORT)`;
      problems.push(`${name}: health check calls port ${url.port}, the ${verb} listens on ${ports}`);
    } else if (!routes.has(url.path)) {
      problems.push(`${name}: health check calls ${url.path}, not a ${listener} route`);
    }
  }
  for (const spec of s.ports ?? []) {
    const { container } = parsePort(spec);
    if (container === admin) {
      problems.push(`${name}: publishes the admin port (${spec}); keep it on the network`);
    } else if (!webhooks || container !== port) {
      problems.push(`${name}: publishes ${spec}, the ${verb} listens on ${port}`);
    }
  }
  if (/^(127\.|localhost$|::1$)/.test(env.ADMIN_HOST ?? "127.0.0.1")) {
    problems.push(`${name}: ADMIN_HOST is loopback, so Prometheus on the compose network cannot scrape it`);
  }
  return problems;
}

function checkAppService(
  name: string,
  s: ComposeService,
  all: Record<string, ComposeService>,
  c: DeployContract,
) {
  const problems: string[] = [];
  const command = words(s.command);
  const [verb = "(none)"] = command;
  const flags = c.verbs.get(verb);
  if (!flags) problems.push(`${name}: command ${verb} is not a loops-sync verb`);
  for (const flag of command.filter((w) => w.startsWith("--"))) {
    if (flags && !flags.has(flag)) problems.push(`${name}: ${verb} has no flag ${flag}`);
  }
  for (const [key, value] of Object.entries(s.environment ?? {})) {
    if (!c.envNames.has(key)) problems.push(`${name}: ${key} is not in the environment schema`);
    if (SECRET_ENV_NAMES.has(key) && !String(value).includes("${")) {
      problems.push(`${name}: ${key} is written in the file instead of coming from the environment`);
    }
  }
  const env = resolvedEnvironment(s);
  try {
    loadEnv(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(`${name}: the environment does not load: ${error.message}`);
  }
  if (MIGRATING_VERBS.has(verb)) {
    const migrator = Object.keys(s.depends_on ?? {}).find((d) => words(all[d]?.command)[0] === "migrate");
    if (!migrator || s.depends_on?.[migrator]?.condition !== "service_completed_successfully") {
      problems.push(`${name}: does not wait for the migrate service to complete`);
    }
    if (!command.includes("--no-migrate") && env.LOOPS_SYNC_MIGRATE_ON_START !== "false") {
      problems.push(`${name}: migrates at start as well as in the migrate service`);
    }
  }
  if (SERVING_VERBS.has(verb)) problems.push(...checkListeners(name, verb, s, env, c));
  if (verb === "worker" && (s.container_name || (s.ports ?? []).some((p) => parsePort(p).host))) {
    problems.push(`${name}: a fixed container name or host port stops --scale ${name}=3`);
  }
  if (verb === "sandbox") {
    const port = Number(flagValue(command, "--port"));
    if (!s.profiles?.length) problems.push(`${name}: the sandbox should only start under a profile`);
    for (const spec of s.ports ?? []) {
      if (parsePort(spec).container !== port)
        problems.push(`${name}: publishes ${spec}, the sandbox listens on ${port}`);
    }
  }
  return problems;
}

/**
 * URLs in app environments and commands that name another service must use that service's real
 * port and user, and a URL to the receiver must be one of its POST routes.
 */
function checkWiring(services: Record<string, ComposeService>, contract: DeployContract): string[] {
  const problems: string[] = [];
  for (const [name, s] of Object.entries(services).filter(([, x]) => isApp(x))) {
    const urlArgs = words(s.command).filter((w) => /^https?:\/\//.test(w));
    const places = [
      ...Object.entries(resolvedEnvironment(s)),
      ...urlArgs.map((u) => ["command", u] as const),
    ];
    for (const [key, value] of places) {
      if (!/^(postgres(ql)?|https?):\/\//.test(value)) continue;
      const url = new URL(value);
      const target = services[url.hostname];
      if (!target) continue; // an outside address (managed Postgres, the real Loops)
      const targetEnv = resolvedEnvironment(target);
      if (url.protocol.startsWith("postgres")) {
        const user = targetEnv.POSTGRES_USER ?? "postgres";
        const db = targetEnv.POSTGRES_DB ?? user;
        if (decodeURIComponent(url.username) !== user)
          problems.push(`${name}: ${key} logs in as ${url.username}, not ${user}`);
        if (url.password !== (targetEnv.POSTGRES_PASSWORD ?? ""))
          problems.push(`${name}: ${key} has another password than ${url.hostname}`);
        if (url.pathname !== `/${db}`) problems.push(`${name}: ${key} opens ${url.pathname}, not /${db}`);
        if (Number(url.port || 5432) !== 5432) problems.push(`${name}: ${key} uses port ${url.port}`);
        continue;
      }
      const command = words(target.command);
      const port = Number(flagValue(command, "--port") ?? targetEnv.PORT ?? contract.defaultPort);
      const called = Number(url.port || (url.protocol === "https:" ? 443 : 80));
      if (called !== port)
        problems.push(`${name}: ${key} calls ${url.hostname}:${called}, which listens on ${port}`);
      const receives = ["receiver", "start"].includes(command[0] ?? "");
      if (receives && !contract.receiverPostPaths.has(url.pathname))
        problems.push(`${name}: ${key} posts to ${url.pathname}, which the receiver does not serve`);
    }
  }
  return problems;
}

/** Every inconsistency found; empty when the file agrees with the code. */
export function findComposeProblems(compose: ComposeFile, contract: DeployContract): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(compose)) {
    if (!TOP_LEVEL.has(key) && !key.startsWith("x-")) problems.push(`unknown top-level key ${key}`);
  }
  const services = compose.services ?? {};
  if (Object.keys(services).length === 0) problems.push("no services");
  for (const [name, s] of Object.entries(services)) {
    if (!s.image && !s.build) problems.push(`${name}: neither image nor build`);
    for (const [target, dep] of Object.entries(s.depends_on ?? {})) {
      const other = services[target];
      if (!other) problems.push(`${name}: depends on ${target}, which is not a service`);
      if (!CONDITIONS.has(dep.condition ?? ""))
        problems.push(`${name}: depends on ${target} with no valid condition`);
      if (dep.condition === "service_healthy" && !hasHealthcheck(other)) {
        problems.push(`${name}: waits for ${target} to be healthy, but ${target} has no health check`);
      }
      if (dep.condition === "service_completed_successfully" && (other?.restart ?? "no") !== "no") {
        problems.push(`${name}: waits for ${target} to complete, but ${target} restarts forever`);
      }
      const sameProfiles = !!other?.profiles?.every((p) => s.profiles?.includes(p));
      if (other?.profiles?.length && dep.required !== false && !sameProfiles) {
        problems.push(`${name}: requires ${target}, which only exists under a profile`);
      }
    }
    for (const volume of s.volumes ?? []) {
      const source = volume.split(":")[0] ?? "";
      if (/^[\w-]+$/.test(source) && !(source in (compose.volumes ?? {})))
        problems.push(`${name}: volume ${source} is not declared`);
    }
    if (isApp(s)) problems.push(...checkAppService(name, s, services, contract));
  }
  problems.push(...checkWiring(services, contract));
  return problems;
}
