import { createLogger } from "@loops-sync/config";
import { describe, expect, it } from "vitest";
import type { WorkerContext } from "../worker-context.ts";
import { workerJobs } from "./worker-jobs.ts";

// Building the list calls no task, so a context with no pool or client behind it is enough.
const ctx = { logger: createLogger({ name: "test", level: "silent" }) } as unknown as WorkerContext;
const client = { forMerchant: () => ({}) } as never;
const logger = ctx.logger;

describe("workerJobs", () => {
  it("holds the worker's own tasks and the reconcile line when nothing else is asked", () => {
    const jobs = workerJobs(ctx, { resourcesCron: "*/15 * * * *", merchantIds: [] });
    expect(Object.keys(jobs.taskList)).toContain("refresh_resources");
    expect(jobs.taskList).not.toHaveProperty("catchup");
    expect(jobs.taskList).not.toHaveProperty("prune");
    expect(jobs.crontab).toBe(
      "*/15 * * * * refresh_resources ?jobKey=refresh_resources&jobKeyMode=preserve_run_at",
    );
  });

  it("adds catch-up on its cron and the daily prune, each with its crontab line", () => {
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
      "0 * * * * refresh_resources ?jobKey=refresh_resources&jobKeyMode=preserve_run_at",
      "*/2 * * * * catchup ?jobKey=catchup&jobKeyMode=preserve_run_at&max=3&queue=catchup_ticks",
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
