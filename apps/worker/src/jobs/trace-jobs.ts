import type { Sql } from "@loops-sync/db";
import { activeTracing, contextFromTraceParent, linksTo, withSpan } from "@loops-sync/tracing";
import type { Attributes, Link } from "@opentelemetry/api";
import type { JobHelpers, Task, TaskList } from "graphile-worker";

/**
 * A job run's span, after the messaging semantic conventions: graphile-worker is the messaging system, the
 * job the message, its task the destination, and running it the `process` operation.
 */
const PROCESS_ATTRIBUTES = {
  "messaging.system": "graphile_worker",
  "messaging.operation.type": "process",
  "messaging.operation.name": "process",
};

/**
 * Every task of `taskList`, each run in a consumer span `process <task>` naming the job (id, attempt and,
 * when its payload has them, the merchant and the events). A job whose payload names stored events
 * (`eventIds`) continues the trace of the first of them the receiver traced (sync.events.trace_parent),
 * linking the others, so an event's way through process_events stays in its receiver's trace; any other
 * job starts a trace of its own. A job that throws ends its span failed. While tracing is off a job runs
 * as the bare task: no span, no statement, no promise of its own.
 */
export function traceJobs(sql: Sql, taskList: TaskList): TaskList {
  const traced: TaskList = {};
  for (const [name, task] of Object.entries(taskList)) if (task) traced[name] = traceJob(sql, name, task);
  return traced;
}

function traceJob(sql: Sql, name: string, task: Task): Task {
  return function tracedJob(payload, helpers) {
    if (!activeTracing()) return task(payload, helpers);
    return runInSpan(sql, name, task, payload, helpers);
  };
}

async function runInSpan(sql: Sql, name: string, task: Task, payload: unknown, helpers: JobHelpers) {
  const { job } = helpers;
  const attributes: Attributes = {
    ...PROCESS_ATTRIBUTES,
    "messaging.destination.name": name,
    "messaging.message.id": String(job.id),
    "loops.job.attempt": job.attempts,
    "loops.job.max_attempts": job.max_attempts,
  };
  const fields = typeof payload === "object" && payload !== null ? (payload as Record<string, unknown>) : {};
  if (typeof fields.merchantId === "string") attributes["loops.merchant.id"] = fields.merchantId;
  const eventIds = Array.isArray(fields.eventIds)
    ? fields.eventIds.filter((id): id is string => typeof id === "string")
    : [];
  let parent = activeTracing()?.api.ROOT_CONTEXT;
  const links: Link[] = [];
  if (eventIds.length > 0) {
    attributes["loops.event.ids"] = eventIds;
    const stored = await storedTraceParents(sql, eventIds);
    parent = contextFromTraceParent(stored[0]) ?? parent;
    links.push(...linksTo(stored.slice(1)));
  }
  return withSpan(`process ${name}`, { kind: "consumer", parent, links, attributes }, async () =>
    task(payload, helpers),
  );
}

/** The traceparents stored with the events (in id order, as the inbox lists them); none if the read fails. */
async function storedTraceParents(sql: Sql, eventIds: string[]): Promise<string[]> {
  try {
    const rows = await sql<{ trace_parent: string }[]>`
      select trace_parent from sync.events
      where id = any(${eventIds}::text[]) and trace_parent is not null order by id`;
    return rows.map((r) => r.trace_parent);
  } catch {
    // The job's own statements meet the same fault and fail it; its span just starts a trace of its own.
    return [];
  }
}
