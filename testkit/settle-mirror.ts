// After the traffic stops: was every accepted webhook stored, and does the mirror come to equal upstream?

import type { Sql } from "@loops-sync/db";
import type { Sandbox } from "@loops-sync/sandbox";
import { compareReplicaWithTruth } from "./compare-replica.ts";

export interface Settled {
  /** Event ids answered 2xx whose row is not in sync.events (must be none: 2xx means committed). */
  acceptedNotStored: string[];
  /** Events of the sandbox's log still missing from sync.events once settled (webhooks or catch-up). */
  eventsNotStored: string[];
  /** Differences between the mirror and the sandbox's orders when the wait ended (empty: equal). */
  mirrorProblems: string[];
  /** Seconds from the last delivery until the mirror equalled upstream (or the wait gave up). */
  settleSeconds: number;
  ordersCompared: number;
}

export async function settleMirror({
  sql,
  sandbox,
  accepted,
  timeoutMs = 60_000,
}: {
  sql: Sql;
  sandbox: Sandbox;
  /** Event ids the receivers answered 2xx. */
  accepted: readonly string[];
  timeoutMs?: number;
}): Promise<Settled> {
  const stored = async (ids: readonly string[]) =>
    new Set(
      (
        await sql<{ id: string }[]>`select id from sync.events where id = any(${ids as string[]}::text[])`
      ).map((r) => r.id),
    );
  const acceptedIds = [...new Set(accepted)];
  const present = await stored(acceptedIds);
  const acceptedNotStored = acceptedIds.filter((id) => !present.has(id));

  const started = performance.now();
  let mirrorProblems: string[] = [];
  const truth = () => sandbox.truth.orders();
  for (;;) {
    const orders = truth();
    // The seeded history belongs to other merchants: compare the live ones, and refuse extras among them.
    mirrorProblems = await compareReplicaWithTruth(sql, orders, { exhaustive: false });
    const [extra] = await sql<{ n: number }[]>`
      select count(*)::int as n from replica.orders
       where merchant_id = any(${sandbox.merchantIds}) and not (id = any(${orders.map((o) => o.id)}::text[]))`;
    if (extra && extra.n > 0)
      mirrorProblems.push(`${extra.n} orders of live merchants the sandbox never had`);
    if (mirrorProblems.length === 0 || performance.now() - started > timeoutMs) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const logIds = sandbox.truth.events().map((e) => e.id);
  const inInbox = await stored(logIds);
  return {
    acceptedNotStored,
    eventsNotStored: logIds.filter((id) => !inInbox.has(id)),
    mirrorProblems,
    settleSeconds: (performance.now() - started) / 1000,
    ordersCompared: truth().length,
  };
}
