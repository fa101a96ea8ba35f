// Every online migration (0025 on) passes squawk and the runner's step rules; an exception is a comment right
// above the statement naming the rule and why. The fixtures prove the lint catches what it must.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { FIRST_ONLINE_MIGRATION, MIGRATIONS_DIR, parseMigrationSteps, readMigrations } from "@loops-sync/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lintMigrations } from "../support/lint-migrations.ts";

const BAD = `-- A migration written for an empty database.

-- step: index without concurrently
create index if not exists things_n on public.things (n);

-- step: a type change
alter table public.things alter column n type bigint;

-- step: a volatile default
alter table public.things add column if not exists seen timestamptz default clock_timestamp();
`;

const EXCUSED = `-- step: a new, empty table and its index
create table if not exists public.fresh (id bigint primary key, n bigint);

-- step: index the new table
-- squawk-ignore require-concurrent-index-creation: public.fresh was created empty by the step before
create index if not exists fresh_n on public.fresh (n);
`;

const UNREASONED = `-- step: index the new table
-- squawk-ignore require-concurrent-index-creation
create index if not exists fresh_n on public.fresh (n);
`;

describe("migration lint", () => {
  let dir: string;
  const fixture = async (name: string, sql: string) => {
    const file = path.join(dir, name);
    await writeFile(file, sql);
    return file;
  };
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "lint-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("finds nothing unexcused in the migrations from 0025 on, and each parses into steps", async () => {
    const online = (await readMigrations()).filter((f) => f.id >= FIRST_ONLINE_MIGRATION);
    expect(await lintMigrations(online.map((f) => path.join(MIGRATIONS_DIR, f.name)))).toEqual([]);
    for (const file of online) expect(() => parseMigrationSteps(file), file.name).not.toThrow();
  });

  it("flags an index without concurrently, a type change and a volatile default", async () => {
    const problems = await lintMigrations([await fixture("0090_bad.sql", BAD)]);
    const rules = problems.map((p) => p.split(" ")[1]);
    expect(rules).toEqual(
      expect.arrayContaining([
        "require-concurrent-index-creation",
        "changing-column-type",
        "adding-field-with-default",
      ]),
    );
    expect(problems.find((p) => p.includes("require-concurrent-index-creation"))).toMatch(
      /^0090_bad\.sql:4 /,
    );
  });

  it("accepts an exception with a reason right above the statement, and refuses one without", async () => {
    expect(await lintMigrations([await fixture("0091_excused.sql", EXCUSED)])).toEqual([]);
    const problems = await lintMigrations([await fixture("0092_unreasoned.sql", UNREASONED)]);
    expect(problems).toEqual([
      '0092_unreasoned.sql:2 squawk-ignore without a reason: write "-- squawk-ignore <rule>: <why>"',
    ]);
  });

  it("refuses what squawk lets pass and the runner cannot run: a concurrently statement sharing its step", () => {
    const sql = `-- step: two things
create table if not exists public.x (id bigint);
create index concurrently if not exists x_id on public.x (id);
`;
    expect(() => parseMigrationSteps({ id: 93, name: "0093_shared.sql", checksum: "", sql })).toThrow(
      /^migration 0093_shared\.sql is malformed: step 1 \(line 1, two things\) has 2 statements and one is concurrently; a concurrently statement is a step of its own$/,
    );
  });
});
