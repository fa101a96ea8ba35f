import type { Sql } from "@loops-sync/db";
import type { Sandbox } from "@loops-sync/sandbox";
import { percentile } from "./percentile.ts";

/**
 * Creates an order for a random merchant every `everyMs` (its webhook goes out at once) and notes when each
 * shows up in replica.orders: freshness of live orders while something else keeps the budget busy.
 */
export function startLiveOrderProbe(
  sql: Sql,
  sandbox: Sandbox,
  {
    everyMs = 500,
    merchantIds = sandbox.merchantIds,
  }: { everyMs?: number; merchantIds?: readonly string[] } = {},
) {
  const created = new Map<string, number>();
  const seen = new Map<string, number>();
  let stopped = false;
  let lastSend = 0;
  const sender = setInterval(() => {
    const merchantId = merchantIds[Math.floor(Math.random() * merchantIds.length)]!;
    created.set(sandbox.createOrder({ merchantId }).id, performance.now());
  }, everyMs);
  const watch = (async () => {
    while (!stopped || seen.size < created.size) {
      const waiting = [...created.keys()].filter((id) => !seen.has(id));
      if (waiting.length > 0) {
        const rows = await sql<{ id: string }[]>`select id from replica.orders where id = any(${waiting})`;
        const now = performance.now();
        for (const r of rows) seen.set(r.id, now);
      }
      if (stopped && performance.now() - lastSend > 60_000) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    /** Stops sending; resolves once every order sent is mirrored (or a minute has passed). */
    async stop(): Promise<{
      sent: number;
      mirrored: number;
      p50Ms: number;
      p99Ms: number;
      maxMs: number;
      slowest: string[];
      /** Each mirrored order: when it was created (performance.now()) and how long it took. */
      samples: { createdAt: number; ms: number }[];
    }> {
      clearInterval(sender);
      stopped = true;
      lastSend = performance.now();
      await watch;
      const ages = [...seen].map(([id, at]) => at - created.get(id)!);
      return {
        sent: created.size,
        mirrored: seen.size,
        p50Ms: percentile(ages, 50),
        p99Ms: percentile(ages, 99),
        maxMs: Math.max(0, ...ages),
        slowest: [...seen]
          .sort((a, b) => b[1] - created.get(b[0])! - (a[1] - created.get(a[0])!))
          .slice(0, 3)
          .map(([id]) => id),
        samples: [...seen].map(([id, at]) => ({ createdAt: created.get(id)!, ms: at - created.get(id)! })),
      };
    },
  };
}
