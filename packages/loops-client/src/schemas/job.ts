import { z } from "zod";
import { ProblemItemSchema } from "./common.ts";
import { openEnum } from "./open-enum.ts";

export const JobResultSchema = z.looseObject({
  location_id: z.string(),
  channel_connection_id: z.string(),
  channel: z.string(),
  status: openEnum("job.results.status", ["pending", "succeeded", "failed"]),
  errors: z.array(ProblemItemSchema).nullish(),
});
export type JobResult = z.output<typeof JobResultSchema>;

export const JOB_STATUSES = ["pending", "running", "succeeded", "partially_failed", "failed"] as const;

/** Background work (menu import or publish); poll GET /jobs/{id} or wait for job.completed. */
export const JobSchema = z.looseObject({
  id: z.string(),
  type: openEnum("job.type", ["menu_import", "menu_publish"]),
  brand_id: z.string().nullish(),
  status: openEnum("job.status", JOB_STATUSES),
  errors: z.array(ProblemItemSchema).nullish(),
  results: z.array(JobResultSchema).nullish(),
  created_at: z.string(),
  completed_at: z.string().nullish(),
});
export type Job = z.output<typeof JobSchema>;
