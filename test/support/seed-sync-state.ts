import type { Sql } from "@loops-sync/db";

export interface SeedEvent {
  id: string;
  merchantId: string;
  source: "webhook" | "catchup" | "cli";
  outcome: string;
  createdAt: Date;
  receivedAt: Date;
}

export interface SeededSyncState {
  now: Date;
  events: SeedEvent[];
}

const minutesBefore = (now: Date, minutes: number) => new Date(now.getTime() - minutes * 60_000);

/**
 * Two active merchants and a revoked one, their cursors, events spread over the last hour (and one older),
 * and graphile-worker jobs: two waiting, one scheduled later, one running and one that used all its attempts.
 */
export async function seedSyncState(sql: Sql): Promise<SeededSyncState> {
  const [clock] = await sql<{ now: Date }[]>`select now() as now`;
  const now = clock!.now;
  await sql`
    insert into sync.merchants (id, status, revoked_at, learned_from) values
      ('mer_alpha', 'active', null, 'config'),
      ('mer_beta', 'active', null, 'webhook'),
      ('mer_gamma', 'revoked', ${minutesBefore(now, 30)}, 'webhook')`;
  await sql`
    insert into sync.cursors (merchant_id, after_event_id, after_created_at, last_run_started_at,
                              last_run_finished_at, last_run_status, last_run_error) values
      ('mer_alpha', 'evt_a_07', ${minutesBefore(now, 7)}, ${minutesBefore(now, 2)}, ${minutesBefore(now, 1.9)}, 'ok', null),
      ('mer_beta', 'evt_b_02', ${minutesBefore(now, 20)}, ${minutesBefore(now, 5)}, ${minutesBefore(now, 4.9)}, 'error',
       'GET /events failed: 500 (client_secret=abc123XYZ should never show)')`;

  const events: SeedEvent[] = [];
  const outcomes = [
    "applied",
    "applied",
    "applied",
    "stale",
    "pending",
    "failed",
    "ignored_self",
    "unhandled",
  ];
  const merchants = ["mer_alpha", "mer_beta", "mer_gamma"];
  for (let i = 0; i < 48; i++) {
    const received = minutesBefore(now, 50 - i + 0.25);
    events.push({
      id: `evt_${String(i).padStart(3, "0")}`,
      merchantId: merchants[i % 3]!,
      source: i % 4 === 0 ? "catchup" : "webhook",
      outcome: outcomes[i % outcomes.length]!,
      createdAt: new Date(received.getTime() - 3_000 - i * 100),
      receivedAt: received,
    });
  }
  // Uneven figures per merchant, so a page that swaps two columns cannot pass.
  for (const n of [1, 2, 3]) {
    events.push({
      id: `evt_backlog_${n}`,
      merchantId: "mer_alpha",
      source: "catchup",
      outcome: "pending",
      createdAt: minutesBefore(now, 3 + n),
      receivedAt: minutesBefore(now, 1 + n / 10),
    });
  }
  // Older than the hour: counts for the merchant, not for the chart.
  events.push({
    id: "evt_old",
    merchantId: "mer_alpha",
    source: "webhook",
    outcome: "applied",
    createdAt: minutesBefore(now, 125),
    receivedAt: minutesBefore(now, 120),
  });
  for (const e of events) {
    await sql`
      insert into sync.events (id, type, merchant_id, created_at, received_at, source, payload, outcome, outcome_at)
      values (${e.id}, 'order.status_changed', ${e.merchantId}, ${e.createdAt}, ${e.receivedAt}, ${e.source},
              ${sql.json({ id: e.id })}, ${e.outcome}, ${e.outcome === "pending" ? null : e.receivedAt})`;
  }

  await sql`select graphile_worker.add_job('process_events', '{"eventIds":["evt_1"]}'::json)`;
  await sql`select graphile_worker.add_job('process_events', '{"eventIds":["evt_2"]}'::json)`;
  await sql`select graphile_worker.add_job('refresh_order', '{"merchantId":"mer_alpha","orderId":"ord_1"}'::json, run_at => now() + interval '1 hour')`;
  const [running] = await sql<{ id: number }[]>`
    select (graphile_worker.add_job('refresh_order', '{"merchantId":"mer_alpha","orderId":"ord_2"}'::json)).id as id`;
  await sql`update graphile_worker._private_jobs set locked_at = now(), locked_by = 'worker-1' where id = ${running!.id}`;
  const [dead] = await sql<{ id: number }[]>`
    select (graphile_worker.add_job('refresh_order', '{"merchantId":"mer_beta","orderId":"ord_3"}'::json, max_attempts => 3)).id as id`;
  await sql`
    update graphile_worker._private_jobs
    set attempts = 3, last_error = 'upstream said 401 with Authorization: Bearer eyJhbGciOi.secret.value'
    where id = ${dead!.id}`;
  await sql`
    insert into sync.order_refresh (merchant_id, order_id, version, queued_at)
    values ('mer_alpha', 'ord_4', 2, now() - interval '90 seconds'), ('mer_alpha', 'ord_5', 1, now())`;
  return { now, events };
}
