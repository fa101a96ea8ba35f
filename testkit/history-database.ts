// A database as a deployment of the previous release has it after a month: migrated by that release's own
// `loops-sync migrate`, then seeded with history. Seeding 200k inbox rows takes tens of seconds on a busy
// machine, so the seeded database can be kept on the server as a template and cloned: its name holds a hash
// of everything that shaped it (the release's commit, the seed's code, the row count), so a stale one is never
// reused, and it is built under a scratch name and renamed, so a concurrent run never clones a half-built one.

import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { connect, type Sql } from "@loops-sync/db";
import { openScratchDatabase, withDatabase } from "./scratch-database.ts";
import { type SeededHistory, seedHistory } from "./seed-history.ts";

const run = promisify(execFile);
const SEED_SOURCE = readFileSync(new URL("./seed-history.ts", import.meta.url), "utf8");

export interface HistoryDatabase {
  url: string;
  /** A small pool on it, for the harness's own queries. */
  sql: Sql;
  /** The seed's figures; `fromCache` when the template was already built. */
  seeded: SeededHistory & { fromCache: boolean; template: string };
  /** Ends the pool and drops the database. */
  drop(): Promise<void>;
}

export interface HistoryDatabaseOptions {
  /** A server-level URL (a superuser that may create databases). */
  serverUrl: string;
  /** The previous release's checkout root: its `bin/loops-sync migrate` builds the schema. */
  releaseRoot: string;
  releaseCommit: string;
  events: number;
  /** Keep the seeded database as a template for later runs. Default: true. */
  cache?: boolean;
  /** See seedHistory. Default: false. */
  vacuum?: boolean;
}

export async function createHistoryDatabase({
  serverUrl,
  releaseRoot,
  releaseCommit,
  events,
  cache = true,
  vacuum = false,
}: HistoryDatabaseOptions): Promise<HistoryDatabase> {
  const key = createHash("sha256")
    .update(`${releaseCommit}\n${events}\n${vacuum}\n${SEED_SOURCE}`)
    .digest("hex");
  const template = `loops_sync_history_${key.slice(0, 16)}`;
  const name = `loops_sync_upgrade_${randomBytes(5).toString("hex")}`;
  const admin = connect(serverUrl, { max: 1, applicationName: "loops-sync-upgrade-setup" });
  let seeded: SeededHistory & { fromCache: boolean; template: string };
  try {
    const [kept] = await admin<{ comment: string | null }[]>`
      select shobj_description(oid, 'pg_database') as comment from pg_database where datname = ${template}`;
    if (cache && kept?.comment) {
      seeded = { ...(JSON.parse(kept.comment) as SeededHistory), fromCache: true, template };
      await cloneWithRetry(admin, name, template);
    } else {
      await admin.unsafe(`create database ${name}`);
      const url = withDatabase(serverUrl, name);
      await run(`${releaseRoot}/bin/loops-sync`, ["migrate"], {
        cwd: releaseRoot,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", DATABASE_URL: url },
      });
      const sql = connect(url, { max: 2, applicationName: "loops-sync-upgrade-seed" });
      try {
        seeded = { ...(await seedHistory(sql, { events, vacuum })), fromCache: false, template };
      } finally {
        await sql.end();
      }
      if (cache) await keepAsTemplate(admin, name, template, seeded);
    }
    // Templates of another seed or release, built over a day ago, are dropped; one in use stays.
    const others = await admin<{ datname: string; comment: string | null }[]>`
      select datname, shobj_description(oid, 'pg_database') as comment from pg_database
       where datname like 'loops_sync_history_%' and datname not like 'loops_sync_history_build_%'
         and datname <> ${template}`;
    for (const { datname, comment } of others) {
      const builtAt = Date.parse((JSON.parse(comment ?? "{}") as { builtAt?: string }).builtAt ?? "");
      if (!(builtAt > Date.now() - 86_400_000))
        await admin.unsafe(`drop database if exists ${datname}`).catch(() => {});
    }
  } catch (error) {
    await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin.end();
    throw error;
  }
  await admin.end();
  return { ...openScratchDatabase(serverUrl, name, "loops-sync-upgrade-test"), seeded };
}

/** Copies the freshly seeded database to the template name (scratch copy, then rename: atomic for others). */
async function keepAsTemplate(
  admin: Sql,
  source: string,
  template: string,
  seeded: SeededHistory,
): Promise<void> {
  const scratch = `loops_sync_history_build_${randomBytes(4).toString("hex")}`;
  try {
    await cloneWithRetry(admin, scratch, source);
    const comment = JSON.stringify({ ...seeded, builtAt: new Date().toISOString() });
    await admin.unsafe(`comment on database ${scratch} is '${comment.replaceAll("'", "''")}'`);
    await admin.unsafe(`alter database ${scratch} rename to ${template}`);
  } catch {
    // Another run kept the same template first (or the copy failed): this run goes on with its own database.
    await admin.unsafe(`drop database if exists ${scratch}`).catch(() => {});
  }
}

async function cloneWithRetry(admin: Sql, name: string, template: string): Promise<void> {
  // Cloning fails while anyone is connected to the template (another run cloning it too); retry briefly.
  for (let attempt = 0; ; attempt++) {
    try {
      await admin.unsafe(`create database ${name} template ${template} strategy file_copy`);
      return;
    } catch (error) {
      if (attempt >= 30) throw error;
      await new Promise((r) => setTimeout(r, 200 + attempt * 100));
    }
  }
}
