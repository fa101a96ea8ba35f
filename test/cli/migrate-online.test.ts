// `loops-sync migrate` as a deploy pipeline runs it, a real process against Postgres: --plan (text and JSON),
// --check's exit codes, flag mistakes, a blocker that never lets go (exit 3 naming it), and a kill between
// steps that the next run resumes.
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { connect, migrate } from "@loops-sync/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { bin, runCli } from "../support/operator-run.ts";

const CLI_TIMEOUT_MS = 60_000;

const THINGS = `-- A test migration: a column, its index, a backfill, a function.

-- step: add things.label
alter table public.things add column if not exists label text;

-- step: index things by label
create index concurrently if not exists things_label on public.things (label);

-- step(batch): label the things
update public.things set label = 'n' || n
 where id in (select id from public.things where label is null limit 500);

-- step: a function
create or replace function public.things_count() returns bigint language sql as $$ select count(*) from public.things $$;
`;

describe("loops-sync migrate, online", { timeout: 240_000 }, () => {
  let db: TestDatabase;
  let dir: string;
  let env: Record<string, string>;
  const cli = (args: string[]) => runCli(["migrate", ...args, "--migrations-dir", dir], env, CLI_TIMEOUT_MS);
  beforeAll(async () => {
    db = await createTestDatabase();
    dir = await mkdtemp(path.join(tmpdir(), "migrate-cli-"));
    env = { DATABASE_URL: db.url };
    await migrate(db.sql, db.url, dir);
    await db.sql`create table public.things (id int primary key, n int)`;
    await db.sql`insert into public.things select g, g from generate_series(1, 1200) g`;
    await writeFile(path.join(dir, "0090_things.sql"), THINGS);
  });
  afterAll(async () => {
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it("--plan lists each pending step with the lock it takes and on which table; --json says the same", async () => {
    const plan = await cli(["--plan"]);
    expect(plan.stderr).toBe("");
    expect(plan.code).toBe(0);
    expect(plan.stdout).toBe(
      [
        "migrations: 4 pending step(s) in 1 file(s)",
        "0090_things.sql step 1/4 (transaction): add things.label",
        "  ACCESS EXCLUSIVE on public.things, brief: alter table … add column",
        "0090_things.sql step 2/4 (concurrently): index things by label",
        "  SHARE UPDATE EXCLUSIVE on public.things: create index concurrently",
        "0090_things.sql step 3/4 (batch): label the things",
        "  ROW EXCLUSIVE on public.things, batched: update",
        "0090_things.sql step 4/4 (transaction): a function",
        "  no lock on existing tables: create function",
        "",
      ].join("\n"),
    );
    const json = await cli(["--plan", "--json"]);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout);
    expect(parsed.pending).toEqual(["0090_things.sql"]);
    expect(parsed.steps[1]).toEqual({
      migration: "0090_things.sql",
      step: 2,
      steps: 4,
      description: "index things by label",
      mode: "concurrently",
      locks: [
        {
          lock: "SHARE UPDATE EXCLUSIVE",
          table: "public.things",
          statement: "create index concurrently",
          holds: null,
        },
      ],
    });
  });

  it("--check exits 1 naming what is pending, 0 once migrate ran; a second migrate is a no-op", async () => {
    const behind = await cli(["--check"]);
    expect(behind.code).toBe(1);
    expect(behind.stdout).toBe("pending: 0090_things.sql\n");
    expect(behind.stderr).toBe(
      "loops-sync: migrate --check: 1 migration(s) pending; run `loops-sync migrate`\n",
    );
    // At LOG_LEVEL info each step is logged as it lands, with its own time and tries (stdout stays one line).
    const applied = await runCli(
      ["migrate", "--migrations-dir", dir],
      { ...env, LOG_LEVEL: "info" },
      CLI_TIMEOUT_MS,
    );
    expect(applied.stdout).toBe("migrations: applied 0090_things.sql\n");
    const logged = applied.stderr
      .split("\n")
      .filter((line) => line.includes('"migration step applied"'))
      .map((line) => JSON.parse(line));
    expect(logged.map(({ migration, step, mode, tries }) => ({ migration, step, mode, tries }))).toEqual([
      { migration: "0090_things.sql", step: 1, mode: "transaction", tries: 1 },
      { migration: "0090_things.sql", step: 2, mode: "concurrently", tries: 1 },
      { migration: "0090_things.sql", step: 3, mode: "batch", tries: 1 },
      { migration: "0090_things.sql", step: 4, mode: "transaction", tries: 1 },
    ]);
    expect(logged.every((l) => Number.isInteger(l.ms) && l.ms >= 0)).toBe(true);
    expect(logged[2]).toMatchObject({ batches: expect.any(Number), rows: expect.any(Number) });
    const current = await cli(["--check"]);
    expect([current.code, current.stdout]).toEqual([0, "migrations: up to date\n"]);
    expect((await cli(["--plan"])).stdout).toBe("migrations: up to date\n");
    expect((await cli([])).stdout).toBe("migrations: up to date\n");
  });

  it("exits 2 naming the flag for combinations that mean nothing", async () => {
    for (const [args, message] of [
      [["--plan", "--check"], /option '--check' cannot be used with option '--plan'/],
      [["--json"], /--json goes with --plan/],
      [["--check", "--json"], /--json goes with --plan/],
      [
        ["--plan", "--max-lock-wait", "5"],
        /option '--max-lock-wait <seconds>' cannot be used with option '--plan'/,
      ],
      [["--max-lock-wait", "soon"], /option '--max-lock-wait <seconds>' argument 'soon' is invalid/],
    ] as const) {
      const run = await cli([...args]);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr).toMatch(message);
    }
  });

  it("exits 3 naming the process that never lets go of the table: its application_name and query", async () => {
    await writeFile(
      path.join(dir, "0091_stuck.sql"),
      "-- step: add things.stuck\nalter table public.things add column if not exists stuck int;\n",
    );
    const blocker = connect(db.url, { max: 1, applicationName: "nightly report" });
    const held = await blocker.reserve();
    try {
      await held`begin`;
      await held.unsafe("select count(*) from public.things where label <> 'private words'");
      const run = await cli(["--max-lock-wait", "2"]);
      expect(run.code).toBe(3);
      expect(run.stderr).toMatch(
        /^loops-sync: migration 0091_stuck\.sql step 1 \(add things\.stuck\) gave up after \d+ tries in \d+ s \(lock timeout\): blocked by pid \d+ \(application_name "nightly report", idle in transaction for \d+ s\): "select count\(\*\) from public\.things where label <> '…'"; end that transaction or retry later/,
      );
      expect(run.stderr).not.toContain("private words");
    } finally {
      await held`rollback`.catch(() => {});
      held.release();
      await blocker.end();
    }
    expect((await cli([])).stdout).toBe("migrations: applied 0091_stuck.sql\n");
  });

  it("resumes at the step a killed migrate was running, keeping the steps before it", async () => {
    await writeFile(
      path.join(dir, "0092_slow.sql"),
      "-- step: first table\ncreate table if not exists public.slow_a (id int);\n\n-- step: a slow step\nselect pg_sleep(2);\n\n-- step: last table\ncreate table if not exists public.slow_b (id int);\n",
    );
    const child = spawn(bin, ["migrate", "--migrations-dir", dir], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", LOG_LEVEL: "silent", ...env },
      stdio: "ignore",
    });
    const exited = new Promise((r) => child.once("exit", r));
    for (let i = 0; i < 300; i++) {
      const rows = await db.sql`select step from sync.migration_steps where migration_id = 92`;
      if (rows.length > 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill("SIGKILL");
    await exited;
    const killedAt = new Date();
    expect(await db.sql`select step from sync.migration_steps where migration_id = 92`).toEqual([
      { step: 1 },
    ]);
    const run = await cli([]);
    expect(run.stdout).toBe("migrations: applied 0092_slow.sql\n");
    const steps = await db.sql<{ step: number; applied_at: Date }[]>`
      select step, applied_at from sync.migration_steps where migration_id = 92 order by step`;
    expect(steps.map((s) => s.step)).toEqual([1, 2, 3]);
    expect(steps[0]!.applied_at.getTime()).toBeLessThan(killedAt.getTime());
    expect(steps[1]!.applied_at.getTime()).toBeGreaterThan(killedAt.getTime());
  });
});
