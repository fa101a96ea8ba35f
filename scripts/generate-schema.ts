// Rewrites packages/schema/src/database.ts from a scratch database migrated with migrations/ (DATABASE_URL's
// server, or an embedded one when it is unset), then drops the scratch database.
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { connect, migrate, startEmbeddedPostgres } from "@loops-sync/db";
import { renderDatabaseTypes } from "@loops-sync/schema";

const TARGET = new URL("../packages/schema/src/database.ts", import.meta.url);

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

const embedded = process.env.DATABASE_URL
  ? undefined
  : await startEmbeddedPostgres({ dataDir: ".data/schema", database: "postgres" });
const serverUrl = process.env.DATABASE_URL ?? embedded!.url;
const scratch = `loops_sync_schema_${randomBytes(4).toString("hex")}`;
const admin = connect(serverUrl, { max: 1, applicationName: "loops-sync-schema" });
try {
  await admin.unsafe(`create database ${scratch}`);
  const url = withDatabase(serverUrl, scratch);
  const sql = connect(url, { max: 2, applicationName: "loops-sync-schema" });
  try {
    await migrate(sql, url);
    await writeFile(TARGET, await renderDatabaseTypes(sql));
    console.log(`wrote ${TARGET.pathname}`);
  } finally {
    await sql.end();
  }
} finally {
  await admin.unsafe(`drop database if exists ${scratch} with (force)`);
  await admin.end();
  await embedded?.stop();
}
