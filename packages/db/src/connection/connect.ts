import postgres from "postgres";
import { notePool } from "./pool-tracker.ts";

export type Sql = postgres.Sql<Record<string, never>>;
export type TransactionSql = postgres.TransactionSql<Record<string, never>>;

export interface ConnectOptions {
  /** Most connections this pool opens. Default: 10. */
  max?: number;
  /** Seconds to wait for a connection before failing. Default: 5. */
  connectTimeoutSeconds?: number;
  /** Application name shown in pg_stat_activity. Default: "loops-sync". */
  applicationName?: string;
  /** Seconds an idle connection stays open. Default: 30. */
  idleTimeoutSeconds?: number;
}

/** A postgres.js pool with the settings loops-sync relies on (prepared statements, quiet notices, UTC). */
export function connect(
  url: string,
  {
    max = 10,
    connectTimeoutSeconds = 5,
    applicationName = "loops-sync",
    idleTimeoutSeconds = 30,
  }: ConnectOptions = {},
): Sql {
  const sql = postgres(url, {
    max,
    connect_timeout: connectTimeoutSeconds,
    idle_timeout: idleTimeoutSeconds,
    prepare: true,
    onnotice: () => {},
    connection: { application_name: applicationName, timezone: "UTC" },
    types: {
      // bigint counts come back as numbers; none of ours approach 2^53.
      bigint: { to: 20, from: [20], serialize: (v: number) => String(v), parse: (v: string) => Number(v) },
    },
  }) as unknown as Sql;
  return notePool(sql, applicationName);
}

/** Turns a driver failure to reach the server into one line an operator can act on. */
export function describeConnectionError(error: unknown, url: string): string {
  const e = error as { code?: string; message?: string };
  let where = "the database";
  try {
    const u = new URL(url);
    where = `${u.hostname}:${u.port || 5432}${u.pathname}`;
  } catch {}
  const reason = [e.code, e.message].filter(Boolean).join(": ") || String(error);
  // too_many_connections: the server answered, but every slot it allows (max_connections, or the role's
  // connection limit) is taken; the URL is right.
  if (e.code === "53300") {
    return `Postgres at ${where} has no connection free (${reason}); lower DATABASE_POOL_SIZE or stop idle clients, or raise max_connections or the role's connection limit`;
  }
  return `cannot reach Postgres at ${where} (${reason}); check DATABASE_URL and that the server is running`;
}
