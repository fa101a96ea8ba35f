import { randomBytes } from "node:crypto";
import { connect, type Sql } from "@loops-sync/db";
import { inject } from "vitest";
import { openScratchDatabase } from "#testkit/scratch-database";

export interface TestDatabase {
  /** Connection URL of this test file's own database. */
  url: string;
  /** A small pool on it. */
  sql: Sql;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
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
  return openScratchDatabase(serverUrl, name, "loops-sync-test");
}
