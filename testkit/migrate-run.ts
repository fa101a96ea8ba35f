// This tree's `loops-sync migrate` as a deploy pipeline runs it: one process, its exit code, its output and its
// wall time, plus the per-step timings the runner records when it does (sync.migration_steps).

import { spawn } from "node:child_process";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { connect, MIGRATIONS_DIR } from "@loops-sync/db";
import { REPO_ROOT } from "./processes.ts";

export interface MigrateRun {
  exitCode: number | null;
  seconds: number;
  /** stdout and stderr, interleaved as they came. */
  output: string;
  /** Each online step this run applied, with its wall time (from the runner's lines, else its table). */
  steps: StepTiming[];
}

export interface StepTiming {
  migration: string | number;
  step: number;
  description: string;
  ms: number;
  tries: number | null;
  batches: number | null;
  rows: number | null;
}

/**
 * A folder with the tree's migrations and `extra` files on top (removed by the caller), for runs that add a
 * scratch migration.
 */
export async function migrationsWith(extra: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const parent = await mkdtemp(path.join(tmpdir(), "loops-sync-migrations-"));
  const dir = path.join(parent, "migrations");
  await cp(MIGRATIONS_DIR, dir, { recursive: true });
  await cp(extra, dir, { recursive: true });
  return { dir, remove: () => rm(parent, { recursive: true, force: true }) };
}

export async function runMigrate({
  databaseUrl,
  env = {},
  root = REPO_ROOT,
  migrationsDir,
  flags = [],
}: {
  databaseUrl: string;
  /** `--migrations-dir`: a folder instead of the tree's own migrations. Default: the tree's. */
  migrationsDir?: string | undefined;
  /** More flags, e.g. ["--check"]. Default: none. */
  flags?: string[];
  /** More variables for the process. Default: none. */
  env?: Record<string, string>;
  /** The checkout whose `bin/loops-sync` runs. Default: this repository. */
  root?: string;
}): Promise<MigrateRun> {
  const startedAt = new Date();
  const started = performance.now();
  const args = ["migrate", ...flags, ...(migrationsDir ? ["--migrations-dir", migrationsDir] : [])];
  const child = spawn(`${root}/bin/loops-sync`, args, {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      DATABASE_URL: databaseUrl,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const exitCode = await new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const seconds = (performance.now() - started) / 1000;
  const printed = stepLines(output);
  if (printed.length > 0 || exitCode !== 0) return { exitCode, seconds, output, steps: printed };
  const sql = connect(databaseUrl, { max: 1, applicationName: "loops-sync-upgrade-probe" });
  try {
    return { exitCode, seconds, output, steps: await recordedSteps(sql, startedAt) };
  } finally {
    await sql.end();
  }
}

/** The runner's own step times: `migrate` logs "migration step applied" for each (LOG_LEVEL info). */
function stepLines(output: string): StepTiming[] {
  const steps: StepTiming[] = [];
  for (const line of output.split("\n")) {
    if (!line.includes('"migration step applied"')) continue;
    const { migration, step, description, ms, tries, batches, rows } = JSON.parse(line) as StepTiming;
    steps.push({
      migration: Number.parseInt(String(migration), 10),
      step,
      description,
      ms,
      tries,
      batches,
      rows,
    });
  }
  return steps;
}

/**
 * Steps sync.migration_steps recorded since `since` (a `migrate` whose log level hides its step lines); each
 * one's time is the gap since the one before, so the first one's includes the process's start.
 */
async function recordedSteps(sql: ReturnType<typeof connect>, since: Date): Promise<StepTiming[]> {
  const [table] = await sql<
    { name: string | null }[]
  >`select to_regclass('sync.migration_steps')::text as name`;
  if (!table?.name) return [];
  const rows = await sql<
    {
      migration_id: number;
      step: number;
      description: string;
      tries: number;
      batches: number | null;
      rows: string | null;
      applied_at: Date;
    }[]
  >`select * from sync.migration_steps where applied_at >= ${since} order by applied_at`;
  let previous = since.getTime();
  return rows.map((r) => {
    const ms = r.applied_at.getTime() - previous;
    previous = r.applied_at.getTime();
    const { migration_id, step, description, tries, batches } = r;
    return {
      migration: migration_id,
      step,
      description,
      ms,
      tries,
      batches,
      rows: r.rows === null ? null : Number(r.rows),
    };
  });
}
