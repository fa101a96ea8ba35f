import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { findKubernetesProblems, type Manifest } from "../support/deploy/check-k8s.ts";
import {
  findKustomizeProblems,
  findLiteralSecrets,
  readManifests,
} from "../support/deploy/check-kustomize.ts";
import { type DeployContract, readDeployContract } from "../support/deploy/deploy-contract.ts";
import { parseYamlDocuments, REPO_ROOT } from "../support/deploy/read-yaml.ts";

const manifests = readManifests("infra/k8s");
const byFile = (file: string) => manifests.filter((m) => m.file === file);
const text = (file: string) => readFileSync(path.join(REPO_ROOT, file), "utf8");

/** The manifests with one file's text edited, as someone might edit it. */
function edited(file: string, from: string, to: string): Manifest[] {
  expect(text(file)).toContain(from);
  const objects = parseYamlDocuments(text(file).replace(from, to), file);
  return [
    ...manifests.filter((m) => m.file !== file),
    ...objects.map((object) => ({ file, object }) as Manifest),
  ];
}

const contract: DeployContract = readDeployContract();

describe("infra/k8s", () => {
  it("parses, and holds the receiver and worker Deployments, a migrate Job, a Service, HPA and PDBs", () => {
    const kinds = manifests.map((m) => `${m.object.kind}/${m.object.metadata?.name ?? ""}`).sort();
    expect(kinds).toEqual([
      "ConfigMap/loops-sync",
      "Deployment/loops-sync-receiver",
      "Deployment/loops-sync-worker",
      "HorizontalPodAutoscaler/loops-sync-receiver",
      "Job/loops-sync-migrate",
      "Kustomization/",
      "Kustomization/",
      "PodDisruptionBudget/loops-sync-receiver",
      "PodDisruptionBudget/loops-sync-worker",
      "Service/loops-sync-receiver",
    ]);
  });

  it("agrees with the code: verbs, flags, env names and values, probe routes, ports, selectors", () => {
    expect(findKubernetesProblems(manifests, contract)).toEqual([]);
  });

  it("applies every manifest through exactly one kustomization with one image", () => {
    expect(findKustomizeProblems(manifests)).toEqual([]);
  });

  it("contains no literal secret value", () => {
    for (const file of new Set(manifests.map((m) => m.file))) {
      expect(findLiteralSecrets(text(file)), file).toEqual([]);
    }
    expect(findLiteralSecrets("url: postgres://app:s3cret@db:5432/x")).not.toEqual([]);
    expect(findLiteralSecrets("LOOPS_WEBHOOK_SECRETS: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")).not.toEqual(
      [],
    );
  });

  const receiver = "infra/k8s/receiver-deployment.yaml";
  it.each([
    [
      "a renamed verb",
      receiver,
      '["receiver", "--no-migrate"]',
      '["serve", "--no-migrate"]',
      /args serve is not a loops-sync verb/,
    ],
    [
      "a flag the verb lacks",
      receiver,
      '"--no-migrate"]',
      '"--skip-migrations"]',
      /receiver has no flag --skip-migrations/,
    ],
    [
      "a readiness path the receiver lacks",
      receiver,
      "path: /readyz",
      "path: /ready",
      /readiness probe calls \/ready, not a receiver route/,
    ],
    [
      "a probe on an undeclared port",
      receiver,
      "path: /healthz\n              port: http",
      "path: /healthz\n              port: metrics",
      /liveness probe port metrics is not a declared/,
    ],
    ["PORT apart from containerPort", receiver, 'value: "8080"', 'value: "9000"', /no containerPort 9000/],
    [
      "a secret as a literal",
      receiver,
      "- name: DATABASE_URL\n              valueFrom:\n                secretKeyRef:\n                  name: loops-sync\n                  key: DATABASE_URL",
      "- name: DATABASE_URL\n              value: postgres://x@db/x",
      /DATABASE_URL must come from a Secret/,
    ],
    [
      "an env name the schema lacks",
      "infra/k8s/configmap.yaml",
      "WORKER_CONCURRENCY:",
      "WORKERS:",
      /WORKERS is not in the environment schema/,
    ],
    [
      "a config value the schema rejects",
      "infra/k8s/configmap.yaml",
      "LOG_LEVEL: info",
      "LOG_LEVEL: loud",
      /LOG_LEVEL: got "loud"/,
    ],
    [
      "migrating at start",
      "infra/k8s/configmap.yaml",
      'LOOPS_SYNC_MIGRATE_ON_START: "false"',
      'LOOPS_SYNC_MIGRATE_ON_START: "true"',
      /worker\): migrates at start/,
    ],
    [
      "a Service that finds no pods",
      "infra/k8s/receiver-service.yaml",
      "component: receiver\n  ports:",
      "component: web\n  ports:",
      /selector matches no Deployment/,
    ],
    [
      "an HPA on a missing Deployment",
      "infra/k8s/receiver-hpa.yaml",
      "name: loops-sync-receiver\n  minReplicas",
      "name: loops-sync-web\n  minReplicas",
      /scaleTargetRef Deployment\/loops-sync-web/,
    ],
    [
      "a worker without probes",
      "infra/k8s/worker-deployment.yaml",
      "readinessProbe:",
      "readinessProbeOff:",
      /worker\): needs readiness and liveness probes/,
    ],
    [
      "a worker scraped on no admin port",
      "infra/k8s/worker-deployment.yaml",
      'prometheus.io/port: "9091"',
      'prometheus.io/port: "8080"',
      /worker-deployment.yaml: scraped on port 8080, not the admin port/,
    ],
    [
      "a worker Prometheus never scrapes",
      "infra/k8s/worker-deployment.yaml",
      'prometheus.io/scrape: "true"',
      'prometheus.io/scrape: "false"',
      /worker-deployment.yaml: the pod is not annotated for scraping/,
    ],
    [
      "a receiver scraped on the webhook port",
      receiver,
      'prometheus.io/port: "9091"',
      'prometheus.io/port: "8080"',
      /receiver-deployment.yaml: scraped on port 8080, not the admin port/,
    ],
    [
      "the admin port behind the public Service",
      "infra/k8s/receiver-service.yaml",
      "targetPort: http",
      "targetPort: admin",
      /exposes the admin port/,
    ],
    [
      "an admin listener on loopback",
      "infra/k8s/configmap.yaml",
      "ADMIN_HOST: 0.0.0.0",
      "ADMIN_HOST: 127.0.0.1",
      /worker\): ADMIN_HOST is loopback/,
    ],
  ])("names a regression: %s", (_, file, from, to, problem) => {
    expect(byFile(file).length).toBeGreaterThan(0);
    expect(findKubernetesProblems(edited(file, from, to), contract).join("\n")).toMatch(problem);
  });

  it("names a kustomization that forgets a file or sets another image", () => {
    const root = "infra/k8s/kustomization.yaml";
    const forgot = findKustomizeProblems(edited(root, "  - worker-pdb.yaml\n", "")).join("\n");
    expect(forgot).toMatch(/worker-pdb.yaml: listed by 0 kustomizations/);
    const otherTag = findKustomizeProblems(edited(root, 'newTag: "0.2.0"', 'newTag: "0.3.0"')).join("\n");
    expect(otherTag).toMatch(/override the image differently/);
  });

  it("fails when the code renames a verb, an env name or a route", () => {
    const verbs = new Map(contract.verbs);
    verbs.delete("migrate");
    const renamed: DeployContract = {
      ...contract,
      verbs,
      envNames: new Set([...contract.envNames].filter((n) => n !== "LOOPS_WEBHOOK_SECRETS")),
      receiverGetPaths: new Set([...contract.receiverGetPaths].filter((p) => p !== "/healthz")),
    };
    const problems = findKubernetesProblems(manifests, renamed).join("\n");
    expect(problems).toMatch(/\(migrate\): args migrate is not a loops-sync verb/);
    expect(problems).toMatch(/LOOPS_WEBHOOK_SECRETS is not in the environment schema/);
    expect(problems).toMatch(/liveness probe calls \/healthz, not a receiver route/);
  });
});
