// A database the tests make on the Postgres server and drop again: its URL, and a small pool on it.
import { connect, type Sql } from "@loops-sync/db";

/** `url` pointed at `database` on the same server. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export interface ScratchDatabase {
  url: string;
  /** A small pool on it. */
  sql: Sql;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/** Opens a pool of 4 named `applicationName` on `name`, created on `serverUrl` already; `drop` removes it. */
export function openScratchDatabase(
  serverUrl: string,
  name: string,
  applicationName: string,
): ScratchDatabase {
  const url = withDatabase(serverUrl, name);
  const sql = connect(url, { max: 4, applicationName });
  return {
    url,
    sql,
    async drop() {
      await sql.end({ timeout: 5 });
      const cleanup = connect(serverUrl, { max: 1 });
      try {
        await cleanup.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await cleanup.end();
      }
    },
  };
}
