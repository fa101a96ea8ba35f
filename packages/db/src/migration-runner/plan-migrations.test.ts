import { describe, expect, it } from "vitest";
import { planSteps } from "./plan-migrations.ts";

const file = (id: number, sql: string) => ({
  id,
  name: `${String(id).padStart(4, "0")}_t.sql`,
  checksum: "",
  sql,
});

describe("planSteps", () => {
  it("names the lock on an existing table, and none on a table the same file creates", () => {
    const plan = planSteps([
      file(19, "alter table replica.orders add column c int;\ncreate index orders_c on replica.orders (c);"),
      file(
        90,
        "-- step: a table\ncreate table if not exists sync.p (id int);\n-- step: its index\ncreate index if not exists p_id on sync.p (id);",
      ),
    ]);
    expect(plan.pending).toEqual(["0019_t.sql", "0090_t.sql"]);
    expect(
      plan.steps.map((s) => [
        s.migration,
        s.step,
        s.mode,
        s.locks.map((l) => `${l.lock} ${l.table} ${l.holds}`),
      ]),
    ).toEqual([
      [
        "0019_t.sql",
        1,
        "whole-file",
        ["ACCESS EXCLUSIVE replica.orders brief", "SHARE replica.orders scans"],
      ],
      ["0090_t.sql", 1, "transaction", ["none null null"]],
      ["0090_t.sql", 2, "transaction", ["none sync.p null"]],
    ]);
  });

  it("leaves out the steps already applied, and marks a batch's lock batched", () => {
    const sql =
      "-- step: col\nalter table sync.m add column if not exists r int;\n-- step(batch): fill\nupdate sync.m set r = 1 where id in (select id from sync.m where r is null limit 100);";
    const plan = planSteps([file(91, sql)], {
      done: new Map(),
      steps: new Map([[91, [{ step: 1, checksum: "" }]]]),
    });
    expect(plan.steps.map((s) => [s.step, s.steps, s.locks[0]])).toEqual([
      [2, 2, { lock: "ROW EXCLUSIVE", table: "sync.m", statement: "update", holds: "batched" }],
    ]);
  });
});
