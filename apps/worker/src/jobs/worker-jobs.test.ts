import { createLogger } from "@loops-sync/config";
import { describe, expect, it } from "vitest";
import type { WorkerContext } from "../worker-context.ts";
import { workerJobs } from "./worker-jobs.ts";

// Building the list calls no task, so a context with no pool or client behind it is enough.
const ctx = { logger: createLogger({ name: "test", level: "silent" }) } as unknown as WorkerContext;
const client = { forMerchant: () => ({}) } as never;
const logger = ctx.logger;

describe("workerJobs", () => {
  it("holds the worker's own tasks, the hourly revoked probe and no reconcile line (the trickle steps itself)", () => {
    const jobs = workerJobs(ctx, { resourcesCron: "*/15 * * * *", merchantIds: [] });
    expect(Object.keys(jobs.taskList)).toEqual(
      expect.arrayContaining(["refresh_resources", "probe_revoked"]),
    );
    expect(jobs.taskList).not.toHaveProperty("catchup");
    expect(jobs.taskList).not.toHaveProperty("prune");
    expect(jobs.crontab).toBe("41 * * * * probe_revoked ?jobKey=probe_revoked&jobKeyMode=preserve_run_at");
  });

  it("adds catch-up (a trickle, no crontab line) and the daily prune on its line", () => {
    const jobs = workerJobs(ctx, {
      resourcesCron: "0 * * * *",
      merchantIds: ["mer_1"],
      catchup: { client, cron: "*/2 * * * *", logger },
      prune: { retentionDays: 35, logger },
    });
    expect(Object.keys(jobs.taskList)).toEqual(
      expect.arrayContaining(["catchup", "prune", "process_events"]),
    );
    expect(jobs.crontab.split("\n")).toEqual([
      "41 * * * * probe_revoked ?jobKey=probe_revoked&jobKeyMode=preserve_run_at",
      "30 3 * * * prune ?jobKey=prune&jobKeyMode=preserve_run_at&max=3",
    ]);
  });

  it("rejects a malformed CATCHUP_CRON before anything starts", () => {
    expect(() =>
      workerJobs(ctx, {
        resourcesCron: "*/15 * * * *",
        merchantIds: [],
        catchup: { client, cron: "hourly" },
      }),
    ).toThrow(/CATCHUP_CRON/);
  });
});
