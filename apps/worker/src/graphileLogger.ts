import type { Logger } from "@loops-sync/config";
import { Logger as GraphileLogger } from "graphile-worker";

/** graphile-worker's log lines through our pino logger (and so through its secret redaction). */
export function graphileLogger(logger: Logger): GraphileLogger {
  return new GraphileLogger((scope) => (level, message, meta) => {
    const fields = { ...scope, ...(meta ?? {}) };
    if (level === "error") logger.error(fields, message);
    else if (level === "warning") logger.warn(fields, message);
    else if (level === "info") logger.info(fields, message);
    else logger.debug(fields, message);
  });
}
