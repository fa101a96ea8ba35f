// Checks infra/Dockerfile against the code without a Docker engine: Node 24 base, non-root, the
// workspace built from the frozen lockfile with patches/ in place first, a runtime holding only the
// packed CLI's production dependencies, a health check on a real receiver route, and an entrypoint
// that is the packed CLI. Returns problems as sentences; an empty list means consistent.
import type { DeployContract } from "./deploy-contract.ts";
import { healthUrlsIn } from "./health-urls.ts";
import {
  DOCKERFILE_KEYWORDS,
  type DockerInstruction,
  type DockerStage,
  dockerStages,
  envPairs,
  execForm,
  parseDockerfile,
} from "./parse-dockerfile.ts";

export interface DockerfileFacts {
  /** Major version of Node the repository pins (.node-version). */
  nodeMajor: number;
  /** package.json's packageManager, e.g. `pnpm@10.34.9`. */
  packageManager: string;
  /** Does this repository path exist and survive .dockerignore? */
  inBuildContext: (relativePath: string) => boolean;
  /** The packed CLI's launcher as installed by npm, e.g. `node_modules/loops-sync/bin/loops-sync.js`. */
  installedBin: string;
}

/** Environment names that belong to Node or the shell rather than loops-sync's schema. */
const PLATFORM_ENV = new Set(["NODE_ENV", "PATH", "PNPM_HOME", "NODE_OPTIONS"]);

/** A RUN that runs pnpm itself (not `npm install --global pnpm@…`). */
const runsPnpm = (i: DockerInstruction) => i.keyword === "RUN" && /(^|&&\s*|;\s*)pnpm\s/.test(i.args);

/** patches/ (read by pnpm with the lockfile) is copied before the first pnpm step. */
function checkPatchesFirst(stages: readonly DockerStage[]): string[] {
  for (const stage of stages) {
    const firstPnpm = stage.instructions.findIndex(runsPnpm);
    if (firstPnpm < 0) continue;
    const sources = (i: DockerInstruction) =>
      i.args
        .split(/\s+/)
        .filter((w) => !w.startsWith("--"))
        .slice(0, -1);
    const copied = stage.instructions
      .slice(0, firstPnpm)
      .some(
        (i) =>
          i.keyword === "COPY" &&
          !i.args.includes("--from=") &&
          sources(i).some((w) => /^(\.\/?|(\.\/)?patches\/?)$/.test(w)),
      );
    if (!copied) {
      return [
        `line ${stage.instructions[firstPnpm]!.line}: pnpm runs before patches/ is copied (ERR_PNPM_PATCH_NOT_FOUND)`,
      ];
    }
  }
  return [];
}

/** Bases (Node major, slim), stage references and build-context sources. */
function checkStages(stages: readonly DockerStage[], facts: DockerfileFacts): string[] {
  const problems: string[] = [];
  const names = new Set<string>();
  for (const stage of stages) {
    if (!names.has(stage.from)) {
      const major = /^node:(\d+)(?:[.-]|$)/.exec(stage.from)?.[1];
      if (Number(major) !== facts.nodeMajor) {
        problems.push(`stage ${stage.name ?? stage.from}: base ${stage.from} is not Node ${facts.nodeMajor}`);
      }
      if (!/-slim$|-slim@/.test(stage.from)) problems.push(`base ${stage.from} is not a slim image`);
    }
    for (const i of stage.instructions) {
      const from = /--from=(\S+)/.exec(i.args)?.[1];
      if (i.keyword === "COPY" && from !== undefined && !names.has(from)) {
        problems.push(`line ${i.line}: COPY --from=${from} names no earlier stage`);
      }
      if ((i.keyword === "COPY" || i.keyword === "ADD") && from === undefined) {
        const words = (execForm(i.args) ?? i.args.split(/\s+/)).filter((w) => !w.startsWith("--"));
        for (const source of words.slice(0, -1)) {
          if (!facts.inBuildContext(source)) {
            problems.push(`line ${i.line}: ${source} is missing from the build context`);
          }
        }
      }
    }
    if (stage.name) names.add(stage.name);
  }
  if (stages.length < 2) problems.push("not a multi-stage build");
  return problems;
}

/** Production dependencies exactly as locked, by the pinned pnpm. */
function checkInstall(stages: readonly DockerStage[], facts: DockerfileFacts): string[] {
  const problems: string[] = [];
  const all = stages.flatMap((s) => s.instructions);
  const copiesLockfile = all.some(
    (i) => i.keyword === "COPY" && /(^|\s)(\.\/)?pnpm-lock\.yaml(\s|$)/.test(i.args),
  );
  if (!copiesLockfile) problems.push("the lockfile (pnpm-lock.yaml) is never copied into the build");
  const installs = all.filter((i) => i.keyword === "RUN" && /\bpnpm (install|i)\b/.test(i.args));
  if (installs.length === 0) problems.push("no `pnpm install` step");
  for (const i of installs) {
    if (!i.args.includes("--frozen-lockfile"))
      problems.push(`line ${i.line}: pnpm install without --frozen-lockfile`);
  }
  const final = stages.at(-1)?.instructions ?? [];
  const npmInstall = final.find((i) => i.keyword === "RUN" && /\bnpm install\b(?!.*--global)/.test(i.args));
  if (!npmInstall) problems.push("the final stage does not npm install the packed CLI");
  else {
    if (!/--omit=dev\b/.test(npmInstall.args))
      problems.push(`line ${npmInstall.line}: npm install without --omit=dev`);
    if (!/--omit=optional\b/.test(npmInstall.args)) {
      problems.push(
        `line ${npmInstall.line}: npm install without --omit=optional (brings embedded Postgres)`,
      );
    }
  }
  for (const i of final.filter((x) => x.keyword === "COPY" && x.args.includes("--from="))) {
    if (/node_modules/.test(i.args))
      problems.push(`line ${i.line}: the final stage copies a build's node_modules`);
  }
  problems.push(...checkPatchesFirst(stages));
  const pnpmGlobal = all.find((i) => i.keyword === "RUN" && /npm install --global pnpm@/.test(i.args));
  const pnpmVersion = /pnpm@(\S+)/.exec(pnpmGlobal?.args ?? "")?.[1];
  if (`pnpm@${pnpmVersion}` !== facts.packageManager) {
    problems.push(`the image installs pnpm@${pnpmVersion}, package.json pins ${facts.packageManager}`);
  }
  return problems;
}

/** The stage that runs: non-root, env names, port, health check route, CLI entry and verb. */
function checkRuntime(final: readonly DockerInstruction[], contract: DeployContract, facts: DockerfileFacts) {
  const problems: string[] = [];
  const userAt = final.findIndex((i) => i.keyword === "USER");
  const user = final[userAt]?.args.trim().split(":")[0];
  if (userAt < 0 || user === "root" || user === "0") problems.push("the final stage runs as root");
  const startsAt = final.findIndex((i) => i.keyword === "ENTRYPOINT" || i.keyword === "CMD");
  if (userAt > startsAt) problems.push("USER comes after ENTRYPOINT/CMD");

  const env = new Map(final.filter((x) => x.keyword === "ENV").flatMap((i) => envPairs(i.args)));
  if (env.get("LOOPS_SYNC_EMBEDDED_POSTGRES") !== "false") {
    problems.push(
      "the final stage does not set LOOPS_SYNC_EMBEDDED_POSTGRES=false (an unset DATABASE_URL must exit 2)",
    );
  }
  for (const i of final.filter((x) => x.keyword === "ENV")) {
    for (const [name, value] of envPairs(i.args)) {
      if (!contract.envNames.has(name) && !PLATFORM_ENV.has(name)) {
        problems.push(`line ${i.line}: ENV ${name} is not in the environment schema`);
      }
      if (name === "PORT" && Number(value) !== contract.defaultPort) {
        problems.push(`line ${i.line}: ENV PORT=${value}, the receiver's default is ${contract.defaultPort}`);
      }
    }
  }
  const exposed = final.filter((i) => i.keyword === "EXPOSE").flatMap((i) => i.args.split(/\s+/));
  if (!exposed.includes(String(contract.defaultPort))) {
    problems.push(`EXPOSE ${exposed.join(" ") || "(none)"} does not include port ${contract.defaultPort}`);
  }

  const health = final.find((i) => i.keyword === "HEALTHCHECK");
  if (!health || /^NONE\b/i.test(health.args)) problems.push("the final stage has no HEALTHCHECK");
  else {
    const urls = healthUrlsIn(health.args);
    if (urls.length === 0) problems.push("HEALTHCHECK calls no loopback URL");
    for (const url of urls) {
      if (!contract.receiverGetPaths.has(url.path)) {
        problems.push(`HEALTHCHECK calls ${url.path}, which the receiver does not serve`);
      }
      if (url.port !== contract.defaultPort) {
        problems.push(`HEALTHCHECK calls port ${url.port}, the receiver listens on ${contract.defaultPort}`);
      }
    }
  }

  const entrypoint = execForm(final.find((i) => i.keyword === "ENTRYPOINT")?.args ?? "");
  if (entrypoint?.[0] !== "node" || entrypoint[1] !== facts.installedBin) {
    problems.push(
      `ENTRYPOINT ${JSON.stringify(entrypoint)} is not node + the packed CLI (${facts.installedBin})`,
    );
  }
  const cmd = execForm(final.find((i) => i.keyword === "CMD")?.args ?? "");
  if (!cmd?.[0] || !contract.verbs.has(cmd[0])) {
    problems.push(`CMD ${JSON.stringify(cmd)} is not a loops-sync verb`);
  }
  return problems;
}

/** Every inconsistency between the Dockerfile and the code; empty when consistent. */
export function findDockerfileProblems(
  text: string,
  contract: DeployContract,
  facts: DockerfileFacts,
): string[] {
  const problems: string[] = [];
  const instructions = parseDockerfile(text);
  for (const i of instructions) {
    if (!DOCKERFILE_KEYWORDS.has(i.keyword))
      problems.push(`line ${i.line}: unknown instruction ${i.keyword}`);
  }
  const firstReal = instructions.find((i) => i.keyword !== "ARG");
  if (firstReal?.keyword !== "FROM") problems.push("the first instruction (after ARGs) must be FROM");
  const stages = dockerStages(instructions);
  return [
    ...problems,
    ...checkStages(stages, facts),
    ...checkInstall(stages, facts),
    ...checkRuntime(stages.at(-1)?.instructions ?? [], contract, facts),
  ];
}
