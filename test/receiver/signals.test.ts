// SIGTERM to a receiver process with a request mid-commit: the request is answered 200 and stored, then
// the process exits on its own.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { deliver, makeEvent, SECRET } from "../support/webhook-fixtures.ts";

describe("SIGTERM", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    // Each insert statement takes 300 ms, so the signal can land while the request's commit runs.
    await db.sql`create function public.slow_insert() returns trigger language plpgsql
                 as $$ begin perform pg_sleep(0.3); return null; end $$`;
    await db.sql`create trigger slow_insert after insert on sync.events
                 for each statement execute function public.slow_insert()`;
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("finishes the in-flight request, stores it, and exits 0", async () => {
    const child = spawn(
      process.execPath,
      [new URL("../support/receiver-process.ts", import.meta.url).pathname, db.url, SECRET],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const url = String((await lines.next()).value);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));

    const event = makeEvent();
    const pending = deliver(url, event);
    // Its insert is in the trigger's pg_sleep (300 ms): the signal lands mid-commit.
    await waitFor(
      async () => {
        const [row] = await db.sql<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event = 'PgSleep'`;
        return row!.n > 0;
      },
      { intervalMs: 10, what: "the request's insert running" },
    );
    child.kill("SIGTERM");
    const result = await pending;
    expect(result.status).toBe(200);
    expect((await lines.next()).value).toBe("closed");
    expect(await exited).toBe(0);
    const rows = await db.sql`select id from sync.events where id = ${event.id}`;
    expect(rows).toHaveLength(1);
  });
});
