import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PACKED_BIN, PACKED_NAME } from "../../scripts/package.ts";
import { readBuildContext } from "../support/deploy/build-context.ts";
import { type DockerfileFacts, findDockerfileProblems } from "../support/deploy/check-dockerfile.ts";
import { type DeployContract, readDeployContract } from "../support/deploy/deploy-contract.ts";
import { REPO_ROOT } from "../support/deploy/read-yaml.ts";

const dockerfile = readFileSync(path.join(REPO_ROOT, "infra/Dockerfile"), "utf8");
const rootPackage = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as {
  packageManager: string;
};
const facts: DockerfileFacts = {
  nodeMajor: Number(readFileSync(path.join(REPO_ROOT, ".node-version"), "utf8").trim().split(".")[0]),
  packageManager: rootPackage.packageManager,
  inBuildContext: readBuildContext(),
  installedBin: `node_modules/${PACKED_NAME}/${PACKED_BIN}`,
};

const contract: DeployContract = readDeployContract();

describe("infra/Dockerfile", () => {
  it("is consistent with the code: Node 24 slim, non-root, frozen build, packed CLI, real verb, real route", () => {
    expect(findDockerfileProblems(dockerfile, contract, facts)).toEqual([]);
  });

  // Each edit below is a plausible regression; the checker must name it.
  it.each([
    ["an older Node", "FROM node:24-slim AS runtime", "FROM node:22-slim AS runtime", /not Node 24/],
    ["running as root", "USER node", "USER root", /runs as root/],
    [
      "no health check",
      "HEALTHCHECK --interval",
      "# HEALTHCHECK --interval",
      /HEALTHCHECK|unknown instruction/,
    ],
    [
      "a health path the receiver lacks",
      "/healthz'",
      "/health'",
      /\/health, which the receiver does not serve/,
    ],
    ["an unfrozen lockfile", "--offline --frozen-lockfile", "--offline", /without --frozen-lockfile/],
    ["dev dependencies", "npm install --omit=dev ", "npm install ", /without --omit=dev/],
    ["embedded Postgres", "--omit=dev --omit=optional", "--omit=dev", /without --omit=optional/],
    [
      "the build's node_modules in the runtime",
      "COPY --from=build /src/loops-sync.tgz ./",
      "COPY --from=build /src/node_modules ./node_modules",
      /copies a build's node_modules/,
    ],
    [
      "pnpm before patches/ (the fetch-first order)",
      "COPY patches ./patches\nRUN pnpm fetch\nCOPY . .",
      "RUN pnpm fetch\nCOPY patches ./patches\nCOPY . .",
      /pnpm runs before patches\/ is copied/,
    ],
    [
      "the sources instead of the package",
      "node_modules/loops-sync/bin/loops-sync.js",
      "apps/cli/src/main.ts",
      /not node \+ the packed CLI/,
    ],
    ["a made-up verb", 'CMD ["start"]', 'CMD ["serve"]', /not a loops-sync verb/],
    ["a missing stage", "--from=build", "--from=builder", /names no earlier stage/],
    [
      "the lockfile not copied",
      "COPY pnpm-lock.yaml pnpm-workspace.yaml",
      "COPY pnpm-workspace.yaml",
      /lockfile/,
    ],
    ["an unknown env name", "HOST=0.0.0.0", "LISTEN_HOST=0.0.0.0", /LISTEN_HOST is not in the environment/],
    [
      "embedded Postgres allowed",
      "LOOPS_SYNC_EMBEDDED_POSTGRES=false",
      "LOOPS_SYNC_EMBEDDED_POSTGRES=true",
      /does not set LOOPS_SYNC_EMBEDDED_POSTGRES=false/,
    ],
  ])("names a regression: %s", (_, from, to, problem) => {
    expect(dockerfile).toContain(from);
    const problems = findDockerfileProblems(dockerfile.replace(from, to), contract, facts);
    expect(problems.join("\n")).toMatch(problem);
  });

  it("fails when the code renames what the image relies on", () => {
    const verbs = new Map(contract.verbs);
    verbs.delete("start");
    const renamed: DeployContract = {
      ...contract,
      verbs,
      receiverGetPaths: new Set([...contract.receiverGetPaths].filter((p) => p !== "/healthz")),
      defaultPort: contract.defaultPort + 1,
    };
    const problems = findDockerfileProblems(dockerfile, renamed, facts).join("\n");
    expect(problems).toMatch(/CMD \["start"\] is not a loops-sync verb/);
    expect(problems).toMatch(/\/healthz, which the receiver does not serve/);
    expect(problems).toMatch(/EXPOSE 8080 does not include port 8081/);
  });
});

describe(".dockerignore", () => {
  const inContext = readBuildContext();
  it("ships manifests, lockfile, patches, sources, build scripts and migrations", () => {
    for (const p of [
      "package.json",
      "pnpm-lock.yaml",
      "patches/postgres@3.4.9.patch",
      "scripts/package.ts",
      "LICENSE",
      "apps/cli/src/main.ts",
      "packages/db/src/migrate.ts",
      "migrations",
    ]) {
      expect(inContext(p), p).toBe(true);
    }
  });
  it("leaves out node_modules, local data, tests and secrets files", () => {
    for (const p of [
      "node_modules",
      "packages/db/node_modules",
      "apps/cli/dist",
      ".dist",
      "test/support/db.ts",
      ".git",
      ".env",
    ]) {
      expect(inContext(p), p).toBe(false);
    }
  });
});
