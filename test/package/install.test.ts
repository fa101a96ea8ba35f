// The packed CLI as a user gets it: `pnpm run package` writes the tarball, `npm install -g --prefix`
// installs it from the npm registry into an empty folder, and the installed `loops-sync` runs from a
// working directory outside the repository with no NODE_PATH: --version, sandbox, migrate, start; on the
// repository's Node 24 and on every other maintained LTS line, Node 22 and 26 (the npm registry's `node`
// package, installed beside it).
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DEFAULT_SANDBOX_CREDENTIALS, DEFAULT_WEBHOOK_SECRET } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "#testkit/free-port";
import { startOtlpCollector } from "#testkit/otlp-collector";
import { loopsApiEnv } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

const REPO_ROOT = path.resolve(import.meta.dirname, "../..");
const rootVersion = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).version;
const node24 = path.dirname(process.execPath);
/** The other Node lines the packed CLI must run on (the `node` package of the npm registry has their binaries). */
const OTHER_NODES = ["22", "26"] as const;

/**
 * The environment of a shell outside the checkout: the machine's own settings (HOME, CA certificates),
 * without pnpm's npm_* settings, NODE_PATH, or the test run's database and Loops variables.
 */
function cleanEnv(extra: NodeJS.ProcessEnv = {}, nodeDir = node24): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        !/^(npm_|pnpm_|PNPM|NODE_PATH$|NODE_OPTIONS$|VITEST|DATABASE_URL$|TEST_DATABASE_URL$|LOOPS_)/i.test(
          k,
        ),
    ),
  );
  return { ...env, PATH: `${nodeDir}:/usr/local/bin:/usr/bin:/bin`, ...extra };
}

describe("the packed CLI installed from its tarball", () => {
  let scratch: string;
  let prefix: string;
  let bin: string;
  let tarball: string;
  /** Node 22's and 26's bin folders, by major. */
  const nodeDirs = new Map<string, string>();
  const children: ChildProcess[] = [];
  const run = (args: string[], extra: NodeJS.ProcessEnv = {}, nodeDir = node24) =>
    spawnSync(bin, args, { cwd: scratch, env: cleanEnv(extra, nodeDir), encoding: "utf8", timeout: 60_000 });

  beforeAll(() => {
    const out = execFileSync(process.execPath, ["scripts/package.ts"], { cwd: REPO_ROOT, encoding: "utf8" });
    tarball = out.trim().split("\n").at(-1)!;
    scratch = mkdtempSync(path.join(tmpdir(), "loops-sync-install-"));
    prefix = path.join(scratch, "prefix");
    execFileSync("npm", ["install", "-g", "--prefix", prefix, "--loglevel=error", tarball], {
      cwd: scratch,
      env: cleanEnv(),
      stdio: ["ignore", "ignore", "inherit"],
    });
    bin = path.join(prefix, "bin", "loops-sync");
    for (const major of OTHER_NODES) {
      const dir = path.join(scratch, `node${major}`);
      execFileSync("npm", ["install", "--prefix", dir, "--loglevel=error", `node@${major}`], {
        cwd: scratch,
        env: cleanEnv(),
        stdio: ["ignore", "ignore", "inherit"],
      });
      nodeDirs.set(major, path.join(dir, "node_modules", ".bin"));
    }
  }, 600_000);

  afterAll(() => {
    for (const child of children) child.kill("SIGKILL");
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it("is one tarball named after the version, printed as the last line", () => {
    expect(path.basename(tarball)).toBe(`loops-sync-${rootVersion}.tgz`);
    // Beside it, the gateway client's and the schema package's (test/package/gateway-client-install.test.ts
    // and schema-install.test.ts install those).
    expect(readdirSync(path.dirname(tarball)).filter((f) => f.endsWith(".tgz"))).toEqual([
      path.basename(tarball),
      `loops-sync-gateway-client-${rootVersion}.tgz`,
      `loops-sync-schema-${rootVersion}.tgz`,
    ]);
  });

  it("prints the repository's version", () => {
    const result = run(["--version"]);
    expect(result.stderr).toBe("");
    expect(result.stdout.trim()).toBe(rootVersion);
    expect(result.status).toBe(0);
  });

  it("answers sandbox --help", () => {
    const result = run(["sandbox", "--help"]);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^Usage: loops-sync sandbox/);
  });

  const oldNode = spawnSync("/usr/bin/node", ["--version"], { encoding: "utf8" }).stdout?.trim() ?? "";
  it.skipIf(!/^v(1\d|2[01])\./.test(oldNode))(`refuses an older Node (${oldNode}) in one line`, () => {
    const result = run(["--version"], {}, "/usr/bin");
    expect(result.status).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(
      `loops-sync: needs Node 22.18.0 or newer (its dependencies graphile-worker and OpenTelemetry do; this is Node ${oldNode.slice(1)}); install it from https://nodejs.org or with your version manager\n`,
    );
  });

  it("declares the Node it needs in engines", () => {
    const installed = path.join(prefix, "lib/node_modules/loops-sync/package.json");
    expect(JSON.parse(readFileSync(installed, "utf8")).engines).toEqual({ node: ">=22.18.0" });
  });

  it.each(OTHER_NODES)("runs on Node %s: --version and sandbox --help", (major) => {
    const dir = nodeDirs.get(major)!;
    const node = spawnSync(path.join(dir, "node"), ["--version"], { encoding: "utf8" }).stdout.trim();
    expect(node).toMatch(new RegExp(`^v${major}\\.`));
    const version = run(["--version"], {}, dir);
    expect(version.stderr).toBe("");
    expect(version.stdout.trim()).toBe(rootVersion);
    const help = run(["sandbox", "--help"], {}, dir);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: loops-sync sandbox/);
  });

  describe("against Postgres", () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase({ empty: true });
    });
    afterAll(async () => {
      await db?.drop();
    });

    it("carries patched postgres.js inside its bundle, with the patch's behaviour", async () => {
      const installed = path.join(prefix, "lib/node_modules/loops-sync");
      const manifest = JSON.parse(readFileSync(path.join(installed, "package.json"), "utf8"));
      expect(Object.keys(manifest.dependencies)).not.toContain("postgres");
      expect(existsSync(path.join(installed, "node_modules/postgres"))).toBe(false);
      // The same build rule bundles @loops-sync/db; a backend killed while its transaction idles must
      // fail the next statement (unpatched 3.4.9 throws a TypeError from a timer, ending the process).
      const built = path.join(REPO_ROOT, "packages/db/dist/index.js");
      const { connect } = (await import(built)) as typeof import("@loops-sync/db");
      const sql = connect(db.url, { max: 1, applicationName: "loops-sync-packed" });
      try {
        const killed = Promise.withResolvers<void>();
        const failed = sql
          .begin(async (tx) => {
            await tx`select 1`;
            await killed.promise;
            await tx`select 2`;
          })
          .then(
            () => "no failure",
            (error: { code?: string }) => error.code,
          );
        const pid = await waitFor(async () => {
          const [row] = await db.sql<{ pid: number }[]>`
            select pid from pg_stat_activity
            where application_name = 'loops-sync-packed' and state = 'idle in transaction'`;
          return row?.pid;
        });
        await db.sql`select pg_terminate_backend(${pid})`;
        // The transaction fails as soon as the pool sees its connection close; its next statement comes after.
        let failedWith: string | undefined;
        void failed.then((code) => {
          failedWith = code;
        });
        await waitFor(() => failedWith !== undefined, {
          what: "the transaction failed by the lost connection",
        });
        killed.resolve();
        expect(["57P01", "CONNECTION_CLOSED"]).toContain(failedWith);
        expect(await sql`select 3 as n`).toEqual([{ n: 3 }]);
      } finally {
        await sql.end({ timeout: 5 });
      }
    });

    it("migrate applies the shipped migrations", async () => {
      const result = run(["migrate"], { DATABASE_URL: db.url });
      expect(result.status, result.stderr).toBe(0);
      const shipped = readdirSync(path.join(REPO_ROOT, "migrations")).filter((f) => f.endsWith(".sql"));
      const applied = await db.sql<{ name: string }[]>`select name from sync.migrations order by id`;
      expect(applied.map((r) => r.name).sort()).toEqual(shipped.sort());
    });

    it.each(OTHER_NODES)(
      "migrate applies them on Node %s too",
      async (major) => {
        const empty = await createTestDatabase({ empty: true });
        try {
          const result = run(["migrate"], { DATABASE_URL: empty.url }, nodeDirs.get(major)!);
          expect(result.status, result.stderr).toBe(0);
          const shipped = readdirSync(path.join(REPO_ROOT, "migrations")).filter((f) => f.endsWith(".sql"));
          const applied = await empty.sql<{ name: string }[]>`select name from sync.migrations`;
          expect(applied.map((r) => r.name).sort()).toEqual(shipped.sort());
        } finally {
          await empty.drop();
        }
      },
      60_000,
    );

    it.each(["24", ...OTHER_NODES])(
      "on Node %s, runs the sandbox and `start` against it, traced; /healthz and build info answer, SIGTERM ends it cleanly",
      async (major) => {
        const nodeDir = major === "24" ? node24 : nodeDirs.get(major)!;
        // The OpenTelemetry SDK, imported dynamically by the bundle, loads from the installed dependencies.
        const collector = await startOtlpCollector();
        const sandboxPort = await freePort();
        const sandbox = spawn(bin, ["sandbox", "--port", String(sandboxPort)], {
          cwd: scratch,
          env: cleanEnv({}, nodeDir),
        });
        children.push(sandbox);
        const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
        await waitFor(
          async () => (await fetch(`${sandboxUrl}/v1/merchants`).catch(() => undefined)) !== undefined,
          {
            timeoutMs: 30_000,
            what: "the installed sandbox to answer",
          },
        );
        const port = await freePort();
        const adminPort = await freePort();
        const start = spawn(bin, ["start"], {
          cwd: scratch,
          env: cleanEnv(
            {
              DATABASE_URL: db.url,
              ...loopsApiEnv({
                apiUrl: `${sandboxUrl}/v1`,
                authUrl: `${sandboxUrl}/oauth/token`,
                credentials: DEFAULT_SANDBOX_CREDENTIALS,
              }),
              LOOPS_WEBHOOK_SECRETS: DEFAULT_WEBHOOK_SECRET,
              PORT: String(port),
              HOST: "127.0.0.1",
              ADMIN_PORT: String(adminPort),
              OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
              OTEL_SERVICE_NAME: "packed-start",
            },
            nodeDir,
          ),
          stdio: ["ignore", "pipe", "pipe"],
        });
        children.push(start);
        let output = "";
        start.stdout!.on("data", (d) => (output += d));
        start.stderr!.on("data", (d) => (output += d));
        const exited = new Promise<number | null>((resolve) => start.on("exit", resolve));
        await waitFor(
          async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.ok,
          {
            timeoutMs: 30_000,
            what: `/readyz of the installed start (output so far: ${output.slice(-500)})`,
          },
        );
        expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
        const metrics = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
        expect(metrics).toContain(`loops_sync_build_info{version="${rootVersion}"} 1`);
        // prom-client's default series: the process runs on the Node asked for.
        expect(metrics).toMatch(
          new RegExp(`^nodejs_version_info\\{version="v${major}\\.[^}]*major="${major}"`, "m"),
        );
        const refused = await fetch(`http://127.0.0.1:${port}/webhooks/loops`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        });
        expect(refused.status).toBe(401);
        // A SIGTERM while the worker may still be starting ends the process cleanly too.
        start.kill("SIGTERM");
        expect(await exited, output.slice(-1000)).toBe(0);
        await collector.close();
        const span = collector.spans.find((s) => s.name === "POST /webhooks/loops");
        expect(span?.attributes["http.response.status_code"]).toBe(401);
        expect(span?.resource["service.name"]).toBe("packed-start");
        sandbox.kill("SIGTERM");
      },
      120_000,
    );
  });
});
