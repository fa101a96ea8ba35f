import type { SyncApi } from "@loops-sync/loops-client";

/** Requests the client sent so far (0 when it keeps no stats). */
export function requestCount(client: SyncApi): number {
  return client.stats?.requests ?? 0;
}
