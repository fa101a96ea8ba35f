import type { Sql } from "@loops-sync/db";
import { activeTracing } from "@loops-sync/tracing";
import type { JobHelpers } from "graphile-worker";
import { describe, expect, it } from "vitest";
import { traceJobs } from "./trace-jobs.ts";

describe("traceJobs with tracing off", () => {
  it("runs the bare task: its own result, and not one statement for the events it names", () => {
    expect(activeTracing()).toBeUndefined();
    const statements: unknown[] = [];
    const sql = ((...args: unknown[]) => {
      statements.push(args);
      throw new Error("no statement expected while tracing is off");
    }) as unknown as Sql;
    const result = Promise.resolve();
    const seen: unknown[] = [];
    const traced = traceJobs(sql, {
      process_events: (payload) => {
        seen.push(payload);
        return result;
      },
    });
    const payload = { eventIds: ["evt_1"] };
    expect(traced.process_events!(payload, {} as JobHelpers)).toBe(result);
    expect(seen).toEqual([payload]);
    expect(statements).toEqual([]);
  });
});
