// Many requests at the same moment: group commit must still give one row and one job per event.
import { createReceiver, type RunningReceiver, startReceiver } from "@loops-sync/receiver";
import type { WebhookEvent } from "@loops-sync/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { deliver, makeEvent, SECRET } from "../support/webhook-fixtures.ts";

describe("concurrent deliveries", () => {
  let db: TestDatabase;
  let receiver: RunningReceiver;

  beforeAll(async () => {
    db = await createTestDatabase();
    receiver = await startReceiver({ sql: db.sql, webhookSecrets: [SECRET], port: 0, host: "127.0.0.1" });
  });
  afterAll(async () => {
    await receiver?.close();
    await db?.drop();
  });

  const jobPayloads = async () =>
    (
      await db.sql<{ ids: string[] }[]>`
        select array(select jsonb_array_elements_text(j.payload::jsonb -> 'eventIds')) as ids
        from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
        where t.identifier = 'process_events'`
    ).map((r) => r.ids);

  it("50 simultaneous copies of one event: all 2xx, exactly one stored, one row, one job", async () => {
    const event = makeEvent();
    const results = await Promise.all(Array.from({ length: 50 }, () => deliver(receiver.url, event)));
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(results.filter((r) => r.json["status"] === "stored")).toHaveLength(1);
    expect(results.filter((r) => r.json["status"] === "duplicate")).toHaveLength(49);
    const rows = await db.sql`select id from sync.events where id = ${event.id}`;
    expect(rows).toHaveLength(1);
    const jobs = (await jobPayloads()).filter((ids) => ids.includes(event.id));
    expect(jobs).toEqual([[event.id]]);
  });

  it("200 distinct events at once, spread over merchants, each stored and enqueued exactly once", async () => {
    const events = Array.from({ length: 200 }, (_, i) => makeEvent({ merchant_id: `mer_c${i % 7}` }));
    // Each event twice, interleaved, so copies land in the same and in different batches.
    const sends = [...events, ...events.slice().reverse()].map((e) => deliver(receiver.url, e));
    const results = await Promise.all(sends);
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(results.filter((r) => r.json["status"] === "stored")).toHaveLength(200);
    const ids = events.map((e) => e.id);
    const stored = await db.sql<{ id: string }[]>`select id from sync.events where id = any(${ids})`;
    expect(stored).toHaveLength(200);
    const enqueued = (await jobPayloads()).flat().filter((id) => ids.includes(id));
    expect(enqueued.sort()).toEqual(ids.slice().sort());
    const merchants = await db.sql`select id from sync.merchants where id like 'mer_c%'`;
    expect(merchants).toHaveLength(7);
  });
});

describe("the receiver's group commit, by default", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("runs one commit at a time and gathers what arrives meanwhile into the next", async () => {
    const { store } = createReceiver({ sql: db.sql, webhookSecrets: [SECRET] });
    let most = 0;
    let watching = true;
    const watch = () => {
      most = Math.max(most, store.batcher.committing);
      if (watching) setImmediate(watch);
    };
    watch();
    // 20 waves of 10 events, 1 ms apart: each wave arrives while an earlier one is committing.
    const stored: Promise<unknown>[] = [];
    for (let wave = 0; wave < 20; wave++) {
      for (let i = 0; i < 10; i++)
        stored.push(store.store(makeEvent({ merchant_id: `mer_w${i % 3}` }) as WebhookEvent));
      await new Promise((r) => setTimeout(r, 1));
    }
    const outcomes = await Promise.all(stored);
    watching = false;
    expect(outcomes).toEqual(Array(200).fill("stored"));
    expect(most).toBe(1);
    // One process_events job per commit (no LOOPS_APPLICATION_ID here): fewer commits than waves.
    const [jobs] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from graphile_worker._private_jobs j
      join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = 'process_events'`;
    expect(jobs!.n).toBeGreaterThan(0);
    expect(jobs!.n).toBeLessThan(20);
  });
});
