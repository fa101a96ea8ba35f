// When Postgres cannot store: 503 with Retry-After, and never a 2xx or half an event.

import { createServer } from "node:net";
import { connect } from "@loops-sync/db";
import { type RunningReceiver, startReceiver } from "@loops-sync/receiver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { deliver, makeEvent, SECRET } from "../support/webhook-fixtures.ts";

/** A port where nothing listens (bound, then released). */
async function closedPort(): Promise<number> {
  return await new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe("storing fails", () => {
  let db: TestDatabase;
  let receiver: RunningReceiver;

  beforeAll(async () => {
    db = await createTestDatabase();
    receiver = await startReceiver({
      sql: db.sql,
      webhookSecrets: [SECRET],
      storeTimeoutMs: 400,
      port: 0,
      host: "127.0.0.1",
    });
  });
  afterAll(async () => {
    await receiver?.close();
    await db?.drop();
  });

  const count = async (id: string) =>
    (
      await db.sql<{ events: number; jobs: number }[]>`
      select (select count(*)::int from sync.events where id = ${id}) as events,
             (select count(*)::int from graphile_worker._private_jobs where payload::jsonb -> 'eventIds' ? ${id}) as jobs`
    )[0]!;

  it("Postgres unreachable: 503 database_unavailable with Retry-After, and /readyz 503", async () => {
    const sql = connect(`postgres://postgres@127.0.0.1:${await closedPort()}/nowhere`, { max: 2 });
    const down = await startReceiver({ sql, webhookSecrets: [SECRET], port: 0, host: "127.0.0.1" });
    try {
      const result = await deliver(down.url, makeEvent());
      expect(result.status).toBe(503);
      expect(result.json["code"]).toBe("database_unavailable");
      expect(result.headers.get("retry-after")).toBe("5");
      const ready = await fetch(`${down.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { code: string }).code).toBe("database_unavailable");
      expect((await fetch(`${down.url}/healthz`)).status).toBe(200);
    } finally {
      await down.close();
      await sql.end();
    }
  });

  it("the job insert fails after the event insert: 503 and no event row; the retry then stores both", async () => {
    await db.sql`create function public.fail_job_insert() returns trigger language plpgsql
                 as $$ begin raise exception 'job table refuses'; end $$`;
    await db.sql`create trigger fail_job_insert before insert on graphile_worker._private_jobs
                 for each row execute function public.fail_job_insert()`;
    const event = makeEvent();
    try {
      const result = await deliver(receiver.url, event);
      expect(result.status).toBe(503);
      expect(await count(event.id)).toEqual({ events: 0, jobs: 0 });
    } finally {
      await db.sql`drop trigger fail_job_insert on graphile_worker._private_jobs`;
    }
    expect((await deliver(receiver.url, event)).status).toBe(200);
    expect(await count(event.id)).toEqual({ events: 1, jobs: 1 });
  });

  it("a statement that waits on a lock past the timeout: 503 store_timeout, nothing stored", async () => {
    const event = makeEvent();
    const release = Promise.withResolvers<void>();
    const locked = Promise.withResolvers<void>();
    const holder = db.sql.begin(async (tx) => {
      await tx`lock table sync.events in access exclusive mode`;
      locked.resolve();
      await release.promise;
    });
    await locked.promise;
    try {
      const result = await deliver(receiver.url, event);
      expect([result.status, result.json["code"]]).toEqual([503, "store_timeout"]);
      expect(result.headers.get("retry-after")).toBe("5");
    } finally {
      release.resolve();
      await holder;
    }
    expect(await count(event.id)).toEqual({ events: 0, jobs: 0 });
    expect((await deliver(receiver.url, event)).status).toBe(200);
  });

  it("an event Postgres cannot store gets 422 alone; events batched with it are stored", async () => {
    // jsonb has no room for \u0000: the content itself is refused, so retrying would never help.
    const poisoned = makeEvent({ data: { note: "nul \u0000 here" } });
    const neighbours = Array.from({ length: 20 }, () => makeEvent());
    const results = await Promise.all([poisoned, ...neighbours].map((e) => deliver(receiver.url, e)));
    expect(results[0]!.status).toBe(422);
    expect(results[0]!.json["code"]).toBe("unstorable_event");
    expect(results.slice(1).map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(await count(poisoned.id)).toEqual({ events: 0, jobs: 0 });
    for (const e of neighbours) expect(await count(e.id)).toEqual({ events: 1, jobs: 1 });
  });
});
