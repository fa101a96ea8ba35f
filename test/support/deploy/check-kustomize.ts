// The kustomizations under infra/k8s: every manifest is applied by exactly one of them, the image
// override is the same everywhere, and no file carries a literal secret.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { K8sObject, Manifest } from "./check-k8s.ts";
import { parseYamlDocuments, REPO_ROOT } from "./read-yaml.ts";

interface Kustomization {
  kind?: string;
  resources?: string[];
  images?: { name?: string; newName?: string; newTag?: string }[];
}

/** Every YAML document under a repository folder, with its file path relative to the root. */
export function readManifests(folder: string): Manifest[] {
  const root = path.join(REPO_ROOT, folder);
  return readdirSync(root, { recursive: true, encoding: "utf8" })
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .flatMap((f) => {
      const file = path.posix.join(folder, f);
      return parseYamlDocuments(readFileSync(path.join(root, f), "utf8"), file).map((object) => ({
        file,
        object: object as K8sObject,
      }));
    });
}

/** Things that look like secret values: webhook secrets, passwords in URLs, bearer tokens. */
export function findLiteralSecrets(text: string): string[] {
  const patterns = [
    /whsec_[A-Za-z0-9+/=]{4,}/,
    /postgres(ql)?:\/\/[^:@/\s]+:[^@\s]+@/,
    /Bearer\s+[A-Za-z0-9._~+/-]{8,}/,
    /^\s*(stringData|data):\s*$[\s\S]*?(PASSWORD|SECRET)/m,
  ];
  return patterns.filter((p) => p.test(text)).map((p) => `matches ${p}`);
}

export function findKustomizeProblems(manifests: readonly Manifest[]): string[] {
  const problems: string[] = [];
  const kustomizations = manifests.filter((m) => m.object.kind === "Kustomization");
  const applied = new Map<string, number>();
  const images = new Set<string>();
  for (const { file, object } of kustomizations) {
    const k = object as Kustomization;
    const dir = path.posix.dirname(file);
    for (const resource of k.resources ?? []) {
      const target = path.posix.join(dir, resource);
      if (!existsSync(path.join(REPO_ROOT, target)))
        problems.push(`${file}: resource ${resource} does not exist`);
      applied.set(target, (applied.get(target) ?? 0) + 1);
    }
    images.add(JSON.stringify(k.images ?? []));
  }
  if (images.size > 1)
    problems.push(`the kustomizations override the image differently: ${[...images].join(" vs ")}`);
  const imageNames = new Set(
    kustomizations.flatMap((m) => (m.object as Kustomization).images ?? []).map((i) => i.name),
  );
  for (const { file, object } of manifests) {
    if (object.kind === "Kustomization") continue;
    const count = applied.get(file) ?? 0;
    if (count !== 1) problems.push(`${file}: listed by ${count} kustomizations, expected exactly 1`);
    for (const c of object.spec?.template?.spec?.containers ?? []) {
      if (!imageNames.has(c.image))
        problems.push(`${file}: image ${c.image} is not the one the kustomizations set`);
    }
  }
  return problems;
}
