// What the deployment files must agree with, read from the code itself: the CLI's verbs and flags
// (from its commander tree, the same data its --help prints), the environment schema's names and
// defaults (from loadEnv), and the receiver's routes (from its sources). A rename in any of them
// makes the deployment tests fail.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { createProgram } from "@loops-sync/cli";
import { loadEnv } from "@loops-sync/config";
import { REPO_ROOT } from "./read-yaml.ts";

const RECEIVER_SRC = path.join(REPO_ROOT, "apps/receiver/src");
const ADMIN_SERVER = path.join(REPO_ROOT, "apps/cli/src/admin-server.ts");

export interface DeployContract {
  /** Each `loops-sync` verb with the long flags its --help lists (`--no-migrate`, `--port`, …). */
  verbs: ReadonlyMap<string, ReadonlySet<string>>;
  /** Every variable name the environment schema reads. */
  envNames: ReadonlySet<string>;
  /** The receiver's port when PORT is unset. */
  defaultPort: number;
  /** Paths the receiver answers with GET. */
  receiverGetPaths: ReadonlySet<string>;
  /** Paths the receiver answers with POST. */
  receiverPostPaths: ReadonlySet<string>;
  /** The admin listener's port when ADMIN_PORT (and METRICS_PORT) are unset. */
  defaultAdminPort: number;
  /** Paths the admin listener answers with GET (the operator page's sub-app counts as /status). */
  adminGetPaths: ReadonlySet<string>;
}

/** Variables whose values are secrets: only ever from a secret store or the caller's environment. */
export const SECRET_ENV_NAMES: ReadonlySet<string> = new Set([
  "DATABASE_URL",
  "LOOPS_CLIENT_SECRET",
  "LOOPS_WEBHOOK_SECRETS",
  "ADMIN_TOKEN",
]);

/** Every name `loadEnv` reads, observed by handing it an environment that records each lookup. */
export function envNamesReadByLoadEnv(): Set<string> {
  const names = new Set<string>();
  const recorder = new Proxy({} as NodeJS.ProcessEnv, {
    get(_target, key) {
      if (typeof key === "string") names.add(key);
      return undefined;
    },
  });
  loadEnv(recorder);
  return names;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
    .map((f) => path.join(dir, f));
}

/** Route paths registered with `.get("/x", …)` / `.post("/x", …)` in the receiver's sources. */
export function receiverRoutes(method: "get" | "post"): Set<string> {
  const pattern = new RegExp(`\\.${method}\\(\\s*["'\`](/[^"'\`]*)["'\`]`, "g");
  const paths = new Set<string>();
  for (const file of sourceFiles(RECEIVER_SRC)) {
    for (const match of readFileSync(file, "utf8").matchAll(pattern)) paths.add(match[1]!);
  }
  return paths;
}

/** Paths the admin listener serves, read from its source. */
export function adminRoutes(): Set<string> {
  const source = readFileSync(ADMIN_SERVER, "utf8");
  const paths = new Set<string>();
  for (const match of source.matchAll(/\.(?:get|route)\(\s*["'`](\/[^"'`]*)["'`]/g)) paths.add(match[1]!);
  return paths;
}

/** Each verb of the `loops-sync` command tree with its long flags, as `--help` lists them. */
export function cliVerbs(): Map<string, Set<string>> {
  const program = createProgram();
  return new Map(
    program.commands.map((command) => [
      command.name(),
      new Set(command.options.map((option) => option.long).filter((long): long is string => !!long)),
    ]),
  );
}

/** Reads the contract from the code. */
export function readDeployContract(): DeployContract {
  return {
    verbs: cliVerbs(),
    envNames: envNamesReadByLoadEnv(),
    defaultPort: loadEnv({}).PORT,
    receiverGetPaths: receiverRoutes("get"),
    receiverPostPaths: receiverRoutes("post"),
    defaultAdminPort: loadEnv({}).ADMIN_PORT,
    adminGetPaths: adminRoutes(),
  };
}
