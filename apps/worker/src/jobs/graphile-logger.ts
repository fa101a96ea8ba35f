import type { Logger } from "@loops-sync/config";
import { Logger as GraphileLogger } from "graphile-worker";

/** graphile-worker's log lines through our pino logger (and so through its secret redaction). */
export function graphileLogger(logger: Logger): GraphileLogger {
  return new GraphileLogger((scope) => (level, message, meta) => {
    const fields = { ...scope, ...(meta ?? {}) };
    if (level === "error") logger.error(fields, message);
    else if (level === "warning") logger.warn(fields, message);
    // One "Completed task … with success" per job (with the job's payload) is noise at info and, at a
    // thousand jobs a second, real CPU; the jobs are counted in the worker's metrics instead.
    else if (level === "info" && !message.startsWith("Completed task")) logger.info(fields, message);
    else logger.debug(fields, message);
  });
}
