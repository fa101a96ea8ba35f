import { randomBytes } from "node:crypto";
import { connect, migrate, resolveDatabase, type Sql } from "@loops-sync/db";

export interface ServerInfo {
  version: string;
  synchronousCommit: string;
  fsync: string;
  maxConnections: number;
}

export interface BenchDatabase {
  /** URL of a database of this phase's own, migrated. */
  url: string;
  /** A small pool on it, for the bench's own queries. */
  sql: Sql;
  /** Ends the pool and drops the database. */
  drop(): Promise<void>;
}

export interface BenchServer {
  /** PostgreSQL version and the durability settings the figures depend on. */
  info: ServerInfo;
  /** Whether the server is the embedded one (DATABASE_URL unset). */
  embedded: boolean;
  /** A fresh, migrated database, so no phase sees another's rows or jobs. */
  createDatabase(): Promise<BenchDatabase>;
  /** Stops an embedded server; a no-op for DATABASE_URL's. */
  close(): Promise<void>;
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * DATABASE_URL's server, or an embedded one when it is unset (as the product does). Each phase then gets
 * a database of its own, created and migrated here and dropped after, so every run leaves nothing behind.
 */
export async function openBenchServer({
  databaseUrl = process.env.DATABASE_URL,
}: {
  /** Default: DATABASE_URL; unset starts the embedded server under .data/bench. */
  databaseUrl?: string | undefined;
} = {}): Promise<BenchServer> {
  const resolved = await resolveDatabase({
    DATABASE_URL: databaseUrl || undefined,
    LOOPS_SYNC_DATA_DIR: ".data/bench",
  });
  const admin = connect(resolved.url, { max: 1, applicationName: "loops-sync-bench" });
  const [row] = await admin<{ version: string; sync: string; fsync: string; max: string }[]>`
    select current_setting('server_version') as version, current_setting('synchronous_commit') as sync,
           current_setting('fsync') as fsync, current_setting('max_connections') as max`;
  return {
    embedded: resolved.embedded,
    info: {
      version: row!.version,
      synchronousCommit: row!.sync,
      fsync: row!.fsync,
      maxConnections: Number(row!.max),
    },
    async createDatabase() {
      const name = `loops_sync_bench_${randomBytes(4).toString("hex")}`;
      await admin.unsafe(`create database ${name}`);
      // Diagnostic knob: e.g. BENCH_PLAN_CACHE_MODE=force_custom_plan to rule out stale generic plans.
      const planCacheMode = process.env.BENCH_PLAN_CACHE_MODE;
      if (planCacheMode && /^[a-z_]+$/.test(planCacheMode)) {
        await admin.unsafe(`alter database ${name} set plan_cache_mode = ${planCacheMode}`);
      }
      const url = withDatabase(resolved.url, name);
      const sql = connect(url, { max: 4, applicationName: "loops-sync-bench" });
      const drop = async () => {
        await sql.end({ timeout: 5 });
        await admin.unsafe(`drop database if exists ${name} with (force)`);
      };
      try {
        await migrate(sql, url);
      } catch (error) {
        await drop();
        throw error;
      }
      return { url, sql, drop };
    },
    async close() {
      await admin.end();
      await resolved.stop();
    },
  };
}

/** One database on its own server connection, for a script with a single phase (bench/scale-out.ts). */
export async function createBenchDatabase(
  options: { databaseUrl?: string | undefined } = {},
): Promise<BenchDatabase & { server: ServerInfo; embedded: boolean }> {
  const server = await openBenchServer(options);
  try {
    const db = await server.createDatabase();
    return {
      ...db,
      server: server.info,
      embedded: server.embedded,
      async drop() {
        try {
          await db.drop();
        } finally {
          await server.close();
        }
      },
    };
  } catch (error) {
    await server.close();
    throw error;
  }
}
