import type { Sql } from "../connection/connect.ts";

/** A process that held a lock a migration step waited for, as pg_stat_activity shows it. */
export interface BlockingProcess {
  pid: number;
  applicationName: string;
  /** active, idle in transaction, … */
  state: string;
  /** Seconds since its transaction began (0 when not in one). */
  transactionSeconds: number;
  /** Its current or last query, string literals blanked (no value, so no secret) and cut to 160 characters. */
  query: string;
}

const QUERY_CHARS = 160;

/** A query as we may print it: literals blanked, whitespace squeezed, cut short. */
export function redactQuery(query: string): string {
  const blanked = query
    .replace(/\$([A-Za-z_]\w*)?\$[\s\S]*?\$\1\$/g, "$$…$$")
    .replace(/'(?:[^']|'')*'?/g, "'…'")
    .replace(/\s+/g, " ")
    .trim();
  return blanked.length > QUERY_CHARS ? `${blanked.slice(0, QUERY_CHARS - 1)}…` : blanked;
}

/** The processes `pid` waits for right now (empty when it waits for none). */
export async function blockingProcesses(sql: Sql, pid: number): Promise<BlockingProcess[]> {
  const rows = await sql<
    { pid: number; application_name: string; state: string | null; seconds: number; query: string | null }[]
  >`
    select a.pid, coalesce(nullif(a.application_name, ''), a.backend_type) as application_name, a.state,
           coalesce(extract(epoch from now() - a.xact_start), 0)::int as seconds, a.query
      from pg_stat_activity a
     where a.pid = any(pg_blocking_pids(${pid}))
     order by a.xact_start nulls last`;
  return rows.map((r) => ({
    pid: r.pid,
    applicationName: r.application_name,
    state: r.state ?? "unknown",
    transactionSeconds: r.seconds,
    query: redactQuery(r.query ?? ""),
  }));
}

/** One line naming a blocker: `pid 4242 (application_name "psql", idle in transaction for 75 s): "…"`. */
export function describeBlocker(b: BlockingProcess): string {
  return `pid ${b.pid} (application_name "${b.applicationName}", ${b.state} for ${b.transactionSeconds} s): "${b.query}"`;
}
