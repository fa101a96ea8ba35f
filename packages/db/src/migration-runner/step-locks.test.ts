import { describe, expect, it } from "vitest";
import { splitStatements } from "./split-statements.ts";
import { statementLock } from "./step-locks.ts";

const lockOf = (sql: string) => {
  const { lock, table, holds } = statementLock(splitStatements(sql)[0]!.code);
  return [lock, table, holds];
};

describe("statementLock", () => {
  it.each([
    [
      "alter table sync.merchants add column if not exists r timestamptz",
      ["ACCESS EXCLUSIVE", "sync.merchants", "brief"],
    ],
    [
      "ALTER TABLE sync.events\n  ADD COLUMN x int GENERATED ALWAYS AS (1) STORED",
      ["ACCESS EXCLUSIVE", "sync.events", "rewrites"],
    ],
    [
      "alter table replica.orders alter column n type bigint",
      ["ACCESS EXCLUSIVE", "replica.orders", "rewrites"],
    ],
    [
      "alter table sync.events add constraint c check (x > 0) not valid",
      ["ACCESS EXCLUSIVE", "sync.events", "brief"],
    ],
    [
      "alter table sync.events add constraint f foreign key (m) references sync.merchants not valid",
      ["SHARE ROW EXCLUSIVE", "sync.events", "brief"],
    ],
    ["alter table sync.events validate constraint c", ["SHARE UPDATE EXCLUSIVE", "sync.events", "scans"]],
    ["alter table sync.events alter column x set not null", ["ACCESS EXCLUSIVE", "sync.events", "scans"]],
    [
      "create index concurrently if not exists e_x on sync.events (x)",
      ["SHARE UPDATE EXCLUSIVE", "sync.events", null],
    ],
    ["create unique index e_x on only sync.events (x)", ["SHARE", "sync.events", "scans"]],
    ["create table if not exists sync.pacing (id int)", ["none", null, null]],
    [
      "create table sync.p (m text references sync.merchants (id))",
      ["SHARE ROW EXCLUSIVE", "sync.merchants", "brief"],
    ],
    ["create or replace function sync.f() returns int language sql as $$ select 1 $$", ["none", null, null]],
    ["create or replace view reporting.v as select 1", ["ACCESS EXCLUSIVE", "reporting.v", "brief"]],
    [
      "update replica.orders set x = 1 where id in (select id from replica.orders limit 10)",
      ["ROW EXCLUSIVE", "replica.orders", null],
    ],
    ["insert into sync.pacing values (1) on conflict do nothing", ["ROW EXCLUSIVE", "sync.pacing", null]],
    ["do $$ begin perform 1; end $$", ["unknown", null, null]],
  ])("%s", (sql, expected) => {
    expect(lockOf(sql)).toEqual(expected);
  });
});
