import type { Env, Logger } from "@loops-sync/config";
import { maskUrl } from "@loops-sync/config";
import { startEmbeddedPostgres } from "./embedded.ts";

export interface ResolvedDatabase {
  url: string;
  /** True when loops-sync started its own server (DATABASE_URL unset). */
  embedded: boolean;
  /** Stops the embedded server; a no-op for an external database. */
  stop(): Promise<void>;
}

/** DATABASE_URL when set; otherwise an embedded PostgreSQL under LOOPS_SYNC_DATA_DIR, reused between runs. */
export async function resolveDatabase(
  env: Pick<Env, "DATABASE_URL" | "LOOPS_SYNC_DATA_DIR">,
  logger?: Logger,
): Promise<ResolvedDatabase> {
  if (env.DATABASE_URL) {
    return { url: env.DATABASE_URL, embedded: false, stop: async () => {} };
  }
  logger?.info({ dataDir: env.LOOPS_SYNC_DATA_DIR }, "DATABASE_URL is unset: starting embedded PostgreSQL");
  const server = await startEmbeddedPostgres({ dataDir: env.LOOPS_SYNC_DATA_DIR });
  // A warning, so the demo (quiet below warn) says it too: the data is not where the user looks for it.
  if (server.relocation) logger?.warn(server.relocation);
  logger?.info({ url: maskUrl(server.url) }, "embedded PostgreSQL is up");
  return { url: server.url, embedded: true, stop: server.stop };
}
