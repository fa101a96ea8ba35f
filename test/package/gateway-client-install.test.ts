// @loops-sync/gateway-client as a partner's backend gets it: the packed tarball installed with npm into a
// project outside the repository, its TypeScript checked with tsc, and its JavaScript run on Node 22, 24 and
// 26 (the npm registry's `node` package) against a real gateway: `loops-sync start` with GATEWAY_TOKEN, the
// sandbox, Postgres. Each run's write is in replica.locations when the run prints it.
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { type StartedLoopsSync, startLoopsSync } from "../support/loops-sync-start.ts";

const REPO_ROOT = path.resolve(import.meta.dirname, "../..");
const PARTNER = path.join(import.meta.dirname, "gateway-partner");
const TOKEN = "gateway-client-test-token-42";
const versionOf = (name: string) =>
  JSON.parse(readFileSync(path.join(REPO_ROOT, "node_modules", name, "package.json"), "utf8"))
    .version as string;

describe("the packed @loops-sync/gateway-client installed in a partner's project", () => {
  let scratch: string;
  let app: string;
  let tarball: string;
  const nodes = new Map<string, string>([["24", process.execPath]]);
  /** A shell outside the checkout on `node`: the machine's own settings (HOME, CA certificates), no pnpm's. */
  const env = (node: string): NodeJS.ProcessEnv => ({
    ...Object.fromEntries(
      Object.entries(process.env).filter(
        ([k]) =>
          !/^(npm_|pnpm_|PNPM|NODE_PATH$|NODE_OPTIONS$|VITEST|DATABASE_URL$|TEST_DATABASE_URL$|LOOPS_)/i.test(
            k,
          ),
      ),
    ),
    PATH: `${path.dirname(node)}:/usr/local/bin:/usr/bin:/bin`,
  });

  beforeAll(() => {
    scratch = mkdtempSync(path.join(tmpdir(), "loops-sync-gateway-client-"));
    const out = execFileSync(
      process.execPath,
      ["scripts/pack-gateway-client.ts", path.join(scratch, "pack")],
      {
        cwd: REPO_ROOT,
        encoding: "utf8",
      },
    );
    tarball = out.trim().split("\n").at(-1)!;
    app = path.join(scratch, "backend");
    cpSync(PARTNER, app, { recursive: true });
    writeFileSync(
      path.join(app, "package.json"),
      JSON.stringify({ name: "partner-backend", private: true, type: "module" }),
    );
    const npm = (args: string[], cwd: string) =>
      execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", ...args], {
        cwd,
        env: env(process.execPath),
        stdio: ["ignore", "ignore", "inherit"],
      });
    npm([tarball, `typescript@${versionOf("typescript")}`, "@types/node@22"], app);
    for (const major of ["22", "26"]) {
      const dir = path.join(scratch, `node${major}`);
      npm(["--prefix", dir, `node@${major}`], scratch);
      nodes.set(major, path.join(dir, "node_modules", ".bin", "node"));
    }
  }, 600_000);
  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it("is built files whose dependencies are npm packages, no workspace import", () => {
    expect(path.basename(tarball)).toMatch(/^loops-sync-gateway-client-\d+\.\d+\.\d+\.tgz$/);
    const installed = path.join(app, "node_modules/@loops-sync/gateway-client");
    const manifest = JSON.parse(readFileSync(path.join(installed, "package.json"), "utf8"));
    expect(manifest).toMatchObject({ name: "@loops-sync/gateway-client", engines: { node: ">=22" } });
    expect(Object.keys(manifest.dependencies).sort()).toEqual(["undici", "zod"]);
    expect(readFileSync(path.join(installed, "dist/index.js"), "utf8")).not.toMatch(/from "@loops-sync\//);
  });

  it("type-checks a partner's TypeScript with tsc", () => {
    const options = { module: "nodenext", target: "es2022", strict: true, noEmit: true, skipLibCheck: false };
    writeFileSync(
      path.join(app, "tsconfig.json"),
      JSON.stringify({ compilerOptions: options, files: ["check.ts"] }),
    );
    const tsc = spawnSync(process.execPath, [path.join(app, "node_modules/typescript/bin/tsc"), "-p", "."], {
      cwd: app,
      env: env(process.execPath),
      encoding: "utf8",
    });
    expect(tsc.stdout + tsc.stderr).toBe("");
    expect(tsc.status).toBe(0);
  }, 180_000);

  describe("against loops-sync start with GATEWAY_TOKEN", () => {
    let db: TestDatabase;
    let sandbox: Sandbox;
    let service: StartedLoopsSync;
    beforeAll(async () => {
      db = await createTestDatabase();
      sandbox = await startSandbox();
      service = await startLoopsSync({
        databaseUrl: db.url,
        sandbox,
        env: { GATEWAY_TOKEN: TOKEN, LOOPS_MERCHANT_IDS: "mer_demo_1" },
      });
    }, 90_000);
    afterAll(async () => {
      service?.child.kill("SIGTERM");
      await new Promise((r) => service?.child.once("exit", r));
      await sandbox?.close();
      await db?.drop();
    });

    for (const [major, opens] of [
      ["22", "06:22"],
      ["24", "06:24"],
      ["26", "06:26"],
    ] as const) {
      it(`runs on Node ${major}: a location update is mirrored when it returns; Loops' 404 and a wrong token are LoopsErrors`, async () => {
        const node = nodes.get(major)!;
        // Not spawnSync: the sandbox answering it runs in this process.
        const run = await promisify(execFile)(
          node,
          ["run.js", service.admin, TOKEN, "mer_demo_1", "loc_demo_1b", opens],
          { cwd: app, env: env(node), encoding: "utf8", timeout: 60_000 },
        );
        expect(run.stderr).toBe("");
        const [version, updated, refused, unauthorized] = run.stdout
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l));
        expect(version.node).toMatch(new RegExp(`^v${major}\\.`));
        expect(updated).toEqual({ updated: "loc_demo_1b", opens });
        const [row] = await db.sql`
          select raw #>> '{opening_hours,sunday,0,opens}' as opens from replica.locations where id = 'loc_demo_1b'`;
        expect(row).toEqual({ opens });
        expect(refused).toEqual({ refused: true, code: "not_found", status: 404 });
        expect(unauthorized).toEqual({ unauthorized: 401 });
      }, 90_000);
    }

    it("saw every write in the mirror's feed as a write", async () => {
      const changes = await db.sql`
        select count(*)::int as n from replica.changes where resource = 'location' and source = 'write'`;
      expect(changes[0]!.n).toBe(3);
    });
  });
});
