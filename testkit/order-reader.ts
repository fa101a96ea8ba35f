// A reader of the mirror, as the partner's backend is: it polls `replica.orders` on a connection of its own and
// records how long each query waited. A migration that takes a lock blocking reads (or queues behind a writer
// while holding one) shows up here as a wait, however briefly it holds it.

import { connect } from "@loops-sync/db";

export interface ReadSample {
  /** ms since the epoch when the query was sent. */
  at: number;
  ms: number;
  /** The query's error, when it failed. */
  error?: string;
}

export interface OrderReader {
  readonly samples: ReadSample[];
  /** Stops polling after the query in flight; resolves when the connection is closed. */
  stop(): Promise<void>;
}

export interface OrderReaderOptions {
  databaseUrl: string;
  /** Merchants whose latest orders are read in turn. */
  merchantIds: readonly string[];
  /** Pause between two queries. Default: 100 ms. */
  intervalMs?: number;
}

/** Polls the newest orders of each merchant in turn (the index a backend's "latest orders" list uses). */
export function startOrderReader({
  databaseUrl,
  merchantIds,
  intervalMs = 100,
}: OrderReaderOptions): OrderReader {
  const sql = connect(databaseUrl, { max: 1, applicationName: "loops-sync-upgrade-reader" });
  const samples: ReadSample[] = [];
  let stopped = false;
  const loop = (async () => {
    for (let n = 0; !stopped; n++) {
      const merchantId = merchantIds[n % merchantIds.length]!;
      const at = Date.now();
      const t0 = performance.now();
      try {
        await sql`
          select id, status, version, total_amount, updated_at from replica.orders
           where merchant_id = ${merchantId} order by updated_at desc limit 20`;
        samples.push({ at, ms: performance.now() - t0 });
      } catch (error) {
        samples.push({ at, ms: performance.now() - t0, error: (error as Error).message });
      }
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();
  return {
    samples,
    async stop() {
      stopped = true;
      await loop;
      await sql.end({ timeout: 5 });
    },
  };
}
