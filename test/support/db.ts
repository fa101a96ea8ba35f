import { randomBytes } from "node:crypto";
import { connect, type Sql } from "@loops-sync/db";
import { inject } from "vitest";

export interface TestDatabase {
  /** Connection URL of this test file's own database. */
  url: string;
  /** A small pool on it. */
  sql: Sql;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export interface CreateTestDatabaseOptions {
  /** An empty database instead of a migrated one. Default: false. */
  empty?: boolean;
}

/** A fresh database of this test file's own, cloned from the migrated template built in global-setup. */
export async function createTestDatabase({
  empty = false,
}: CreateTestDatabaseOptions = {}): Promise<TestDatabase> {
  const serverUrl = inject("databaseUrl");
  const template = empty ? "template0" : inject("templateDatabase");
  const name = `loops_sync_test_${randomBytes(5).toString("hex")}`;
  const admin = connect(serverUrl, { max: 1 });
  try {
    // Cloning fails while anyone is connected to the template; retry briefly.
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.unsafe(`create database ${name} template ${template}`);
        break;
      } catch (error) {
        if (attempt >= 20) throw error;
        await new Promise((r) => setTimeout(r, 100 + attempt * 50));
      }
    }
  } finally {
    await admin.end();
  }
  const url = withDatabase(serverUrl, name);
  const sql = connect(url, { max: 4, applicationName: "loops-sync-test" });
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
