import type { CallOptions } from "../call-options.ts";
import { type Job, JobSchema } from "../schemas/job.ts";
import { id } from "../validation/rules.ts";
import { validateInput } from "../validation/validate-input.ts";
import { ScopedResource } from "./scoped-resource.ts";

/** GET /jobs/{job_id}: a menu import or publish running in the background. */
export class JobsResource extends ScopedResource {
  async get(jobId: string, options: CallOptions = {}): Promise<Job> {
    validateInput(id, jobId, "jobId");
    return this.send({
      method: "GET",
      route: "/jobs/{job_id}",
      path: `/jobs/${encodeURIComponent(jobId)}`,
      schema: JobSchema,
      signal: options.signal,
    });
  }
}
