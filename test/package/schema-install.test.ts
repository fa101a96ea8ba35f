// @loops-sync/schema as a partner's backend gets it: the packed tarball installed with npm into a project
// outside the repository, with postgres, kysely and typescript from the npm registry; TypeScript checked
// against it with tsc, and JavaScript run on the system's Node 20 against a migrated database, reading the
// changes this repository's writers recorded.
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { orderChange, writeChanges, writeNewOrders } from "../support/write-changes.ts";

const REPO_ROOT = path.resolve(import.meta.dirname, "../..");
const PARTNER = path.join(import.meta.dirname, "schema-partner");
const versionOf = (name: string) =>
  JSON.parse(readFileSync(path.join(REPO_ROOT, "node_modules", name, "package.json"), "utf8"))
    .version as string;

/** The machine's oldest supported Node (20 to 23) on PATH or in /usr/bin, else the one running the tests. */
function partnerNode(): string {
  const dirs = [...(process.env.PATH ?? "").split(":"), "/usr/bin", "/usr/local/bin"];
  for (const dir of dirs) {
    const node = path.join(dir, "node");
    if (!existsSync(node)) continue;
    const version = spawnSync(node, ["--version"], { encoding: "utf8" }).stdout?.trim() ?? "";
    if (/^v(20|21|22|23)\./.test(version)) return node;
  }
  return process.execPath;
}

describe("the packed @loops-sync/schema installed in a partner's project", () => {
  const node = partnerNode();
  const nodeVersion = spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim();
  /** A shell outside the checkout on that Node: no pnpm settings, no NODE_PATH, none of the test's variables. */
  const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    HOME: process.env.HOME ?? "/tmp",
    PATH: `${path.dirname(node)}:/usr/local/bin:/usr/bin:/bin`,
    ...extra,
  });
  let scratch: string;
  let app: string;
  let tarball: string;
  const children: ChildProcess[] = [];
  const tsc = (tsconfig: string) =>
    spawnSync(node, [path.join(app, "node_modules/typescript/bin/tsc"), "-p", tsconfig], {
      cwd: app,
      env: env(),
      encoding: "utf8",
    });

  beforeAll(() => {
    scratch = mkdtempSync(path.join(tmpdir(), "loops-sync-schema-"));
    const out = execFileSync(process.execPath, ["scripts/pack-schema.ts", path.join(scratch, "pack")], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    });
    tarball = out.trim().split("\n").at(-1)!;
    app = path.join(scratch, "backend");
    cpSync(PARTNER, app, { recursive: true });
    writeFileSync(
      path.join(app, "package.json"),
      JSON.stringify({ name: "partner-backend", private: true, type: "module" }),
    );
    // Kysely 0.28 is the newest for Node 20 (0.29 needs 22); the other versions are the repository's.
    execFileSync(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        tarball,
        `postgres@${versionOf("postgres")}`,
        "kysely@^0.28",
        `typescript@${versionOf("typescript")}`,
        "@types/node@20",
      ],
      { cwd: app, env: env(), stdio: ["ignore", "ignore", "inherit"] },
    );
  }, 300_000);
  afterAll(() => {
    for (const child of children) child.kill("SIGKILL");
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it("is a package of built files whose only dependencies are its postgres and kysely peers", () => {
    expect(path.basename(tarball)).toMatch(/^loops-sync-schema-\d+\.\d+\.\d+\.tgz$/);
    const installed = path.join(app, "node_modules/@loops-sync/schema");
    const manifest = JSON.parse(readFileSync(path.join(installed, "package.json"), "utf8"));
    expect(manifest).toMatchObject({
      name: "@loops-sync/schema",
      exports: { ".": { types: "./dist/index.d.ts", default: "./dist/index.js" } },
      peerDependencies: { postgres: expect.any(String), kysely: expect.any(String) },
      engines: { node: ">=20" },
    });
    expect(manifest.dependencies).toBeUndefined();
    expect(readFileSync(path.join(installed, "dist/index.js"), "utf8")).not.toMatch(/@loops-sync\//);
  });

  it("type-checks a partner's TypeScript with tsc, and refuses a wrong type", () => {
    const options = { module: "nodenext", target: "es2022", strict: true, noEmit: true, skipLibCheck: false };
    writeFileSync(
      path.join(app, "tsconfig.json"),
      JSON.stringify({ compilerOptions: options, files: ["check.ts"] }),
    );
    const ok = tsc("tsconfig.json");
    expect(ok.stdout + ok.stderr).toBe("");
    expect(ok.status).toBe(0);
    writeFileSync(
      path.join(app, "wrong.ts"),
      `import { readChanges } from "@loops-sync/schema";
import postgres from "postgres";
const [change] = await readChanges(postgres(), { after: 0 });
export const position: string = change!.position;
`,
    );
    writeFileSync(
      path.join(app, "tsconfig.wrong.json"),
      // Our declarations were checked above; the libraries' need not be again.
      JSON.stringify({ compilerOptions: { ...options, skipLibCheck: true }, files: ["wrong.ts"] }),
    );
    const wrong = tsc("tsconfig.wrong.json");
    expect(wrong.stdout).toMatch(
      /wrong\.ts\(4,14\): error TS2322: Type 'number' is not assignable to type 'string'/,
    );
    expect(wrong.status).not.toBe(0);
  }, 180_000);

  describe("against Postgres", () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase();
    });
    afterAll(async () => {
      await db?.drop();
    });

    it(`runs on ${nodeVersion}: reads and follows the changes this repository's writers recorded, across killed connections`, async () => {
      await writeChanges(db.sql, [
        orderChange("ord_p1", 1, "placed", null),
        orderChange("ord_p2", 1, "placed", null),
      ]);
      await writeChanges(db.sql, [orderChange("ord_p1", 2, "accepted", "placed")]);
      await db.sql`update replica.change_feed_state set pruned_through = 1`;
      const child = spawn(node, ["run.js", "1"], {
        cwd: app,
        env: env({ DATABASE_URL: db.url }),
        stdio: ["ignore", "pipe", "pipe"],
      });
      children.push(child);
      let stdout = "";
      let stderr = "";
      child.stdout!.on("data", (d: Buffer) => (stdout += d));
      child.stderr!.on("data", (d: Buffer) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
      await waitFor(() => stdout.includes('{"following":true}'), {
        what: `the reader to follow (stderr: ${stderr})`,
      });
      await writeNewOrders(db.sql, "later", 3);
      await waitFor(() => stdout.includes('{"got":3}'), {
        what: `three followed changes (stderr: ${stderr})`,
      });
      // Its pool and its listener die (postgres.js from npm, unpatched); it must resume with no loss.
      const killed = await db.sql`
        select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'partner-backend'`;
      expect(killed.length).toBeGreaterThan(0);
      await writeNewOrders(db.sql, "after_kill", 3);
      expect(await exited, stderr).toBe(0);
      const [version, expired, read, , , followed, last, consumed, snapshot] = stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(version).toEqual({ node: nodeVersion });
      expect(expired).toEqual({ expired: true, code: "changes_expired", prunedThrough: 1 });
      const json = (rows: unknown) => JSON.parse(JSON.stringify(rows));
      expect(read.read).toEqual(json(await db.sql`select * from replica.read_changes(1, 2)`));
      expect(read.read.map((c: { resource_id: string }) => c.resource_id)).toEqual(["ord_p2", "ord_p1"]);
      expect(followed.followed).toEqual(json(await db.sql`select * from replica.read_changes(3, 1000)`));
      expect(followed.followed.map((c: { resource_id: string }) => c.resource_id)).toEqual([
        ...["ord_later_0", "ord_later_1", "ord_later_2"],
        ...["ord_after_kill_0", "ord_after_kill_1", "ord_after_kill_2"],
      ]);
      // Kysely over the partner's own pool (bigint as postgres.js's default string there).
      expect(last).toEqual({ last: { position: "9", resource_id: "ord_after_kill_2" } });
      // consumeChanges in three instances, then snapshotThenFollow, on the same Node.
      expect(consumed).toEqual({ consumed: [7, 8, 9] });
      expect(snapshot).toEqual({ snapshot: 9, after: 9 });
    }, 60_000);
  });
});
