// Shutdown during load: every request the server took before close is committed and answered; no 2xx lost.
import { type RunningReceiver, startReceiver } from "@loops-sync/receiver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { deliver, makeEvent, SECRET } from "../support/webhook-fixtures.ts";

interface Attempt {
  id: string;
  /** HTTP status, or "refused" when the connection was closed before the request reached the server. */
  status: number | "refused";
  answeredAt: number;
}

describe("graceful shutdown", () => {
  let db: TestDatabase;
  let receiver: RunningReceiver;

  beforeAll(async () => {
    db = await createTestDatabase();
    // Slow commits (50 ms each) so that requests are surely mid-commit when close() is called.
    await db.sql`create function public.slow_insert() returns trigger language plpgsql
                 as $$ begin perform pg_sleep(0.05); return null; end $$`;
    await db.sql`create trigger slow_insert after insert on sync.events
                 for each statement execute function public.slow_insert()`;
    receiver = await startReceiver({ sql: db.sql, webhookSecrets: [SECRET], port: 0, host: "127.0.0.1" });
  });
  afterAll(async () => {
    await receiver?.close();
    await db?.drop();
  });

  it("answers every in-flight request after its commit, and every 2xx is in the table", async () => {
    const attempts: Attempt[] = [];
    const client = async () => {
      for (let i = 0; i < 200; i++) {
        const event = makeEvent();
        const status = await deliver(receiver.url, event).then(
          (r) => r.status,
          () => "refused" as const,
        );
        attempts.push({ id: event.id, status, answeredAt: performance.now() });
        if (status === "refused") return;
      }
    };
    const clients = Array.from({ length: 20 }, client);
    // Close under load: once more than 20 requests were answered (a slow machine needs longer than a fast one).
    await waitFor(() => attempts.filter((a) => a.status === 200).length > 20, {
      what: "more than 20 acknowledged webhooks",
    });
    const closeBegan = performance.now();
    await receiver.close();
    await Promise.all(clients);

    // Nothing but success or a refused connection: no 5xx, no half-answered request.
    expect(attempts.filter((a) => a.status !== 200 && a.status !== "refused")).toEqual([]);
    const acknowledged = attempts.filter((a) => a.status === 200).map((a) => a.id);
    expect(acknowledged.length).toBeGreaterThan(20);
    // Requests mid-commit when close() began were still answered.
    expect(attempts.filter((a) => a.status === 200 && a.answeredAt > closeBegan).length).toBeGreaterThan(0);
    // Stored exactly what was acknowledged: a request cut off after storing would show up here as extra.
    const ids = attempts.map((a) => a.id);
    const stored = await db.sql<{ id: string }[]>`select id from sync.events where id = any(${ids})`;
    expect(stored.map((r) => r.id).sort()).toEqual(acknowledged.sort());
    await expect(fetch(`${receiver.url}/healthz`)).rejects.toThrow();
  });
});
