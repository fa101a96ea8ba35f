import type { Sql } from "@loops-sync/db";
import { LoopsClient } from "@loops-sync/loops-client";
import type { Sandbox } from "@loops-sync/sandbox";
import { expect } from "vitest";

/** A real client of the sandbox, with quick retries so fault tests stay short. */
export function sandboxClient(sandbox: Sandbox): LoopsClient {
  return new LoopsClient({
    apiUrl: sandbox.apiUrl,
    authUrl: sandbox.authUrl,
    clientId: sandbox.credentials.clientId,
    clientSecret: sandbox.credentials.clientSecret,
    retry: { baseDelayMs: 10, maxDelayMs: 50 },
  });
}

/** `count` orders, each moved 0–5 steps along its lifecycle (deterministic by index). */
export function makeOrders(sandbox: Sandbox, merchantId: string, count: number): string[] {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const order = sandbox.createOrder({ merchantId });
    ids.push(order.id);
    for (let step = 0; step < i % 6; step++) {
      try {
        sandbox.advanceOrder(order.id);
      } catch {
        break; // reached a final status
      }
    }
  }
  return ids;
}

export interface OrderSummary {
  id: string;
  version: number;
  status: string;
  total: number;
}

export async function replicaOrders(sql: Sql, merchantId: string): Promise<OrderSummary[]> {
  const rows = await sql<{ id: string; version: string; status: string; total_amount: string }[]>`
    select id, version, status, total_amount from replica.orders where merchant_id = ${merchantId} order by id`;
  return rows.map((r) => ({
    id: r.id,
    version: Number(r.version),
    status: r.status,
    total: Number(r.total_amount),
  }));
}

export function truthOrders(sandbox: Sandbox, merchantId: string): OrderSummary[] {
  return sandbox.truth
    .orders(merchantId)
    .map((o) => ({ id: o.id, version: o.version, status: o.status, total: o.totals.total.amount }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export async function expectReplicaEqualsTruth(
  sql: Sql,
  sandbox: Sandbox,
  merchantId: string,
): Promise<void> {
  const truth = truthOrders(sandbox, merchantId);
  expect(truth.length).toBeGreaterThan(0);
  expect(await replicaOrders(sql, merchantId)).toEqual(truth);
}

/** Every event id named by a process_events job, with how many jobs named it (the public view has no payload). */
export async function enqueuedEventCounts(sql: Sql): Promise<Map<string, number>> {
  const rows = await sql<{ id: string; n: number }[]>`
    select e.event_id as id, count(*)::int as n
    from graphile_worker._private_jobs j
    join graphile_worker._private_tasks t on t.id = j.task_id
    cross join lateral jsonb_array_elements_text(j.payload::jsonb -> 'eventIds') as e(event_id)
    where t.identifier = 'process_events'
    group by e.event_id`;
  return new Map(rows.map((r) => [r.id, r.n]));
}
