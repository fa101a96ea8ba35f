import { describe, expect, it } from "vitest";
import { parseMigrationSteps } from "./migration-steps.ts";

const parse = (sql: string) => parseMigrationSteps({ id: 90, name: "0090_t.sql", checksum: "", sql });
const refusal = (sql: string) => {
  try {
    parse(sql);
  } catch (error) {
    return (error as Error).message.replace(/^migration 0090_t\.sql is malformed: /, "");
  }
  return "accepted";
};

describe("parseMigrationSteps", () => {
  it("splits a file into its steps, with the header comment left out", () => {
    const steps = parse(`-- Why.

-- step: add a column
alter table public.t add column if not exists c int;
comment on column public.t.c is 'semi; colon';

-- step: index it
create index concurrently if not exists t_c on public.t (c);

-- step(batch): fill it
update public.t set c = 1 where id in (select id from public.t where c is null limit 1000);

-- step: a function whose body has semicolons
create or replace function public.f() returns int language plpgsql as $$ begin return 1; end $$;
`);
    expect(steps.map((s) => [s.index, s.mode, s.description, s.statements.length])).toEqual([
      [1, "transaction", "add a column", 2],
      [2, "concurrently", "index it", 1],
      [3, "batch", "fill it", 1],
      [4, "transaction", "a function whose body has semicolons", 1],
    ]);
  });

  it("refuses what the runner could not run safely, saying which step and why", () => {
    expect(refusal("create table public.t (id int);\n-- step: x\nselect 1;")).toBe(
      'SQL before the first "-- step:" line; every statement belongs to a step',
    );
    expect(refusal("-- just a comment\n")).toBe('no "-- step: <what it does>" line');
    expect(refusal("-- step (batch): x\nselect 1;")).toMatch(
      /^line 1 "-- step \(batch\): x" is not a step marker/,
    );
    expect(refusal("-- step:\nselect 1;")).toMatch(/^line 1 "-- step:" is not a step marker/);
    expect(refusal("-- step: empty\n-- nothing\n")).toBe("step 1 (line 1, empty) has no statement");
    expect(refusal("-- step: t\nbegin;\nselect 1;\ncommit;")).toMatch(
      /^step 1 .* controls the transaction itself/,
    );
    expect(refusal("-- step: i\ncreate index concurrently on public.t (c);")).toMatch(/without naming it/);
    expect(refusal("-- step(batch): b\nupdate public.t set c = 1;")).toMatch(
      /without "limit N" \(N ≤ 10000\)/,
    );
    expect(
      refusal(
        "-- step(batch): b\nupdate public.t set c = 1 where id in (select id from public.t limit 50000);",
      ),
    ).toMatch(/without "limit N"/);
    expect(refusal("-- step(batch): b\nselect 1 limit 5;")).toMatch(/not an update, delete or insert/);
    expect(
      refusal(
        "-- step: c\nalter table public.t add constraint c_pos check (c > 0) not valid;\nalter table public.t validate constraint c_pos;",
      ),
    ).toMatch(/validate in a later step$/);
  });

  it("reads concurrently only as code, not in a comment or a string", () => {
    const [step] = parse(
      "-- step: note\n-- built concurrently later\ninsert into public.t (s) values ('concurrently');\nselect 1;",
    );
    expect(step!.mode).toBe("transaction");
  });
});
