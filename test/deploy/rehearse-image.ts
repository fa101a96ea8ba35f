// Rehearses infra/Dockerfile without a Docker engine: replays its COPY, ENV, WORKDIR and RUN steps
// in a scratch folder per stage (the build context filtered by .dockerignore), then starts the
// result the way the image would: every verb's --help, and with DATABASE_URL set, `migrate`, the
// receiver, and the image's own HEALTHCHECK command against it. Not part of the test suite (it
// downloads the production dependencies into a fresh pnpm store); run it by hand or in CI:
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node test/deploy/rehearse-image.ts
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "#testkit/free-port";
import { isDockerIgnored, parseDockerignore } from "./build-context.ts";
import { dockerStages, envPairs, execForm, parseDockerfile } from "./parse-dockerfile.ts";
import { REPO_ROOT } from "./read-yaml.ts";

const scratch = mkdtempSync(path.join(tmpdir(), "loops-sync-image-"));
const ignore = parseDockerignore(readFileSync(path.join(REPO_ROOT, ".dockerignore"), "utf8"));
const stages = dockerStages(parseDockerfile(readFileSync(path.join(REPO_ROOT, "infra/Dockerfile"), "utf8")));
const shims = path.join(scratch, "bin");
const env: NodeJS.ProcessEnv = {
  ...process.env,
  PATH: `${shims}:${path.dirname(process.execPath)}:${process.env.PATH}`,
  npm_config_store_dir: path.join(scratch, "store"),
};
delete env.DATABASE_URL;
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
        const dest = inStage(words.at(-1)!);
        for (const source of words.slice(0, -1)) {
          const origin = from ? path.join(roots.get(from)!, source) : path.join(REPO_ROOT, source);
          const target = source === "." || from ? dest : path.join(dest, path.basename(source));
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

async function run(): Promise<void> {
  const final = build();
  const cwd = path.join(final.root, final.workdir);
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
