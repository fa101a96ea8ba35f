// Checks the Kubernetes manifests under infra/k8s against the code without a cluster: known kinds,
// real verbs and flags, env names of the schema (secrets only through secretKeyRef), probes on real
// receiver routes and declared ports, and selectors that find their Deployments.
import { ConfigError, loadEnv } from "@loops-sync/config";
import { type DeployContract, SECRET_ENV_NAMES } from "./deploy-contract.ts";

export interface Manifest {
  file: string;
  object: K8sObject;
}
type Labels = Record<string, string>;
interface Probe {
  httpGet?: { path?: string; port?: string | number };
}
interface Container {
  name?: string;
  image?: string;
  args?: string[];
  command?: string[];
  ports?: { name?: string; containerPort?: number }[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name?: string; key?: string } } }[];
  envFrom?: { configMapRef?: { name?: string }; secretRef?: { name?: string } }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  securityContext?: { runAsNonRoot?: boolean };
}
interface PodTemplate {
  metadata?: { labels?: Labels; annotations?: Labels };
  spec?: { containers?: Container[]; securityContext?: { runAsNonRoot?: boolean }; restartPolicy?: string };
}
export interface K8sObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; labels?: Labels };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  spec?: {
    selector?: Labels | { matchLabels?: Labels };
    template?: PodTemplate;
    ports?: { name?: string; targetPort?: string | number }[];
    scaleTargetRef?: { kind?: string; name?: string };
  };
}

export const KNOWN_KINDS = new Set([
  "v1/ConfigMap",
  "v1/Service",
  "apps/v1/Deployment",
  "batch/v1/Job",
  "policy/v1/PodDisruptionBudget",
  "autoscaling/v2/HorizontalPodAutoscaler",
]);
const HTTP_VERBS = new Set(["receiver", "start"]);
/** Verbs that run an admin listener: probed, scraped, never behind a Service. */
const SERVING_VERBS = new Set(["receiver", "worker", "start"]);
const MIGRATING_VERBS = new Set(["receiver", "worker", "start"]);

const matches = (selector: Labels | undefined, labels: Labels | undefined) =>
  !!selector &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

function checkContainer(
  where: string,
  c: Container,
  configMaps: Map<string, Labels>,
  contract: DeployContract,
) {
  const problems: string[] = [];
  const [verb = "(none)", ...rest] = c.args ?? [];
  const flags = contract.verbs.get(verb);
  if (c.command) problems.push(`${where}: sets command; the image's entrypoint is the CLI, give args`);
  if (!flags) problems.push(`${where}: args ${verb} is not a loops-sync verb`);
  for (const flag of rest.filter((w) => w.startsWith("--"))) {
    if (flags && !flags.has(flag)) problems.push(`${where}: ${verb} has no flag ${flag}`);
  }
  const env: Record<string, string> = {};
  for (const ref of c.envFrom ?? []) {
    const data = configMaps.get(ref.configMapRef?.name ?? "");
    if (ref.configMapRef && !data)
      problems.push(`${where}: envFrom names a missing ConfigMap ${ref.configMapRef.name}`);
    if (ref.secretRef)
      problems.push(`${where}: envFrom secretRef hides which variables it sets; use secretKeyRef`);
    Object.assign(env, data);
  }
  for (const e of c.env ?? []) {
    if (!contract.envNames.has(e.name)) problems.push(`${where}: ${e.name} is not in the environment schema`);
    if (e.value !== undefined) env[e.name] = e.value;
    const ref = e.valueFrom?.secretKeyRef;
    if (SECRET_ENV_NAMES.has(e.name) && !ref) problems.push(`${where}: ${e.name} must come from a Secret`);
    if (ref && ref.key !== e.name)
      problems.push(`${where}: ${e.name} reads Secret key ${ref.key}; keys are the variable names`);
  }
  try {
    loadEnv(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(`${where}: the environment does not load: ${error.message}`);
  }
  const port = Number(env.PORT ?? contract.defaultPort);
  const ports = c.ports ?? [];
  if (
    MIGRATING_VERBS.has(verb) &&
    !rest.includes("--no-migrate") &&
    env.LOOPS_SYNC_MIGRATE_ON_START !== "false"
  ) {
    problems.push(`${where}: migrates at start; the migrate Job is the only migrator`);
  }
  const admin = Number(env.ADMIN_PORT || env.METRICS_PORT || contract.defaultAdminPort);
  if (HTTP_VERBS.has(verb) && !ports.some((p) => p.containerPort === port)) {
    problems.push(`${where}: no containerPort ${port} (PORT)`);
  }
  if (SERVING_VERBS.has(verb)) {
    if (!ports.some((p) => p.name === "admin" && p.containerPort === admin))
      problems.push(`${where}: no container port named admin on ${admin} (ADMIN_PORT)`);
    if (!c.readinessProbe || !c.livenessProbe) problems.push(`${where}: needs readiness and liveness probes`);
    if (/^(127\.|localhost$|::1$)/.test(env.ADMIN_HOST ?? "127.0.0.1"))
      problems.push(`${where}: ADMIN_HOST is loopback, so probes and Prometheus cannot reach the admin port`);
  }
  for (const [kind, probe] of Object.entries({
    readiness: c.readinessProbe,
    liveness: c.livenessProbe,
    startup: c.startupProbe,
  })) {
    const get = probe?.httpGet;
    if (!get) continue;
    const target = ports.find((p) => p.name === get.port || p.containerPort === get.port);
    if (!target) {
      problems.push(`${where}: ${kind} probe port ${get.port} is not a declared container port`);
      continue;
    }
    const listener =
      target.containerPort === admin ? "admin" : target.containerPort === port ? "receiver" : undefined;
    const routes = listener === "admin" ? contract.adminGetPaths : contract.receiverGetPaths;
    if (!listener || (listener === "receiver" && !HTTP_VERBS.has(verb)))
      problems.push(
        `${where}: ${kind} probe port ${target.containerPort} is neither PORT ${port} nor ADMIN_PORT ${admin}`,
      );
    else if (!routes.has(get.path ?? ""))
      problems.push(`${where}: ${kind} probe calls ${get.path}, not a ${listener} route`);
  }
  return problems;
}

/** A pod of a serving verb is annotated for Prometheus, on its admin port's /metrics. */
function checkScrape(file: string, template: PodTemplate, contract: DeployContract): string[] {
  const serving = (template.spec?.containers ?? []).filter((c) => SERVING_VERBS.has(c.args?.[0] ?? ""));
  if (serving.length === 0) return [];
  const a = template.metadata?.annotations ?? {};
  const adminPorts = serving.flatMap((c) =>
    (c.ports ?? []).filter((p) => p.name === "admin").map((p) => p.containerPort),
  );
  const problems: string[] = [];
  if (a["prometheus.io/scrape"] !== "true") problems.push(`${file}: the pod is not annotated for scraping`);
  else if (!adminPorts.includes(Number(a["prometheus.io/port"])))
    problems.push(`${file}: scraped on port ${a["prometheus.io/port"]}, not the admin port`);
  else if (!contract.adminGetPaths.has(a["prometheus.io/path"] ?? "/metrics"))
    problems.push(`${file}: scraped on ${a["prometheus.io/path"]}, not an admin route`);
  return problems;
}

/** Every inconsistency among the manifests and between them and the code; empty when consistent. */
export function findKubernetesProblems(manifests: readonly Manifest[], contract: DeployContract): string[] {
  const problems: string[] = [];
  const objects = manifests.filter((m) => m.object.kind !== "Kustomization");
  const configMaps = new Map<string, Labels>();
  for (const { file, object: o } of objects) {
    const id = `${o.apiVersion}/${o.kind}`;
    if (o.kind === "Secret")
      problems.push(`${file}: a Secret manifest commits its values; create it out of band`);
    else if (!KNOWN_KINDS.has(id)) problems.push(`${file}: unknown kind ${id}`);
    if (!o.metadata?.name) problems.push(`${file}: ${o.kind} without metadata.name`);
    if (o.kind === "ConfigMap") {
      configMaps.set(o.metadata?.name ?? "", o.data ?? {});
      for (const key of Object.keys(o.data ?? {})) {
        if (!contract.envNames.has(key)) problems.push(`${file}: ${key} is not in the environment schema`);
        if (SECRET_ENV_NAMES.has(key)) problems.push(`${file}: ${key} is a secret and belongs in the Secret`);
      }
    }
  }
  const deployments = objects.filter((m) => m.object.kind === "Deployment").map((m) => m.object);
  for (const { file, object: o } of objects) {
    const template = o.spec?.template;
    if (!template) continue;
    const pod = template.spec;
    const matchLabels = (o.spec?.selector as { matchLabels?: Labels } | undefined)?.matchLabels;
    if (o.kind === "Deployment" && !matches(matchLabels, template.metadata?.labels)) {
      problems.push(`${file}: selector does not match the pod template's labels`);
    }
    if (o.kind === "Job" && !["Never", "OnFailure"].includes(pod?.restartPolicy ?? "")) {
      problems.push(`${file}: a Job needs restartPolicy Never or OnFailure`);
    }
    problems.push(...checkScrape(file, template, contract));
    for (const c of pod?.containers ?? []) {
      const where = `${file} (${c.name})`;
      if (pod?.securityContext?.runAsNonRoot !== true && c.securityContext?.runAsNonRoot !== true) {
        problems.push(`${where}: runAsNonRoot is not required`);
      }
      problems.push(...checkContainer(where, c, configMaps, contract));
    }
  }
  for (const { file, object: o } of objects) {
    const labelsOf = (d: K8sObject) => d.spec?.template?.metadata?.labels;
    if (o.kind === "Service") {
      const target = deployments.find((d) => matches(o.spec?.selector as Labels, labelsOf(d)));
      if (!target) problems.push(`${file}: selector matches no Deployment`);
      const names = target?.spec?.template?.spec?.containers?.flatMap((c) => c.ports ?? []) ?? [];
      for (const p of o.spec?.ports ?? []) {
        const port = names.find((n) => n.name === p.targetPort || n.containerPort === p.targetPort);
        if (!port) problems.push(`${file}: targetPort ${p.targetPort} is not a port of the selected pods`);
        else if (port.name === "admin")
          problems.push(`${file}: exposes the admin port (/metrics, /status); keep it off every Service`);
      }
    }
    if (o.kind === "PodDisruptionBudget") {
      const selector = (o.spec?.selector as { matchLabels?: Labels } | undefined)?.matchLabels;
      if (!deployments.some((d) => matches(selector, labelsOf(d))))
        problems.push(`${file}: selector matches no Deployment`);
    }
    if (o.kind === "HorizontalPodAutoscaler") {
      const ref = o.spec?.scaleTargetRef;
      if (ref?.kind !== "Deployment" || !deployments.some((d) => d.metadata?.name === ref.name)) {
        problems.push(`${file}: scaleTargetRef ${ref?.kind}/${ref?.name} is not a Deployment here`);
      }
    }
  }
  return problems;
}
