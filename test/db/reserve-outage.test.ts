// A reserved connection (`sql.reserve()`, what pipelinedTransaction and so the order applier run on) in a
// Postgres outage. postgres.js 3.4.9 left two of its promises pending for good, and with them the worker's
// order applier and every order batch waiting on it (each idle in its transaction, its orders locked): a
// reservation asked for during the outage was dropped when the connection that took it came back, and
// statements queued behind a statement still being described were never failed when the connection
// closed. patches/postgres@3.4.9.patch fixes both; each test fails without it.
import { connect, type Sql } from "@loops-sync/db";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";

/** "resolved", "rejected" or still "pending" once the promise's own callbacks have run. */
function track(promise: Promise<unknown>): () => string {
  let state = "pending";
  promise.then(
    () => {
      state = "resolved";
    },
    () => {
      state = "rejected";
    },
  );
  return () => state;
}

describe("a reserved connection in a Postgres outage", () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let sql: Sql | undefined;
  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
    const target = new URL(db.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  });
  afterEach(async () => {
    await proxy.restore();
    await sql?.end({ timeout: 5 });
    sql = undefined;
  });
  afterAll(async () => {
    await proxy?.close();
    await db?.drop();
  });
  /** One connection through the proxy, as the worker's pool goes through DATABASE_URL. */
  const onePool = (): Sql => {
    const url = new URL(db.url);
    url.hostname = "127.0.0.1";
    url.port = String(proxy.port);
    return connect(url.toString(), { max: 1, applicationName: "loops-sync-reserve" });
  };

  it("fails the statements queued on it when its connection closes", async () => {
    sql = onePool();
    const reserved = await sql.reserve();
    // New on this connection and with a parameter: described first, so the statements after it wait in
    // the reservation's own queue until it answers.
    const described = track(reserved`select ${1}::int as n, pg_sleep(30)`.execute());
    const queued = track(reserved`select 2 as n`.execute());
    await waitFor(
      async () =>
        (
          await db.sql<{ n: number }[]>`
            select count(*)::int as n from pg_stat_activity
            where application_name = 'loops-sync-reserve' and query like '%pg_sleep(30)%'`
        )[0]!.n > 0,
      { what: "the first statement running" },
    );
    await proxy.cut();
    await waitFor(() => described() === "rejected", { what: "the running statement to fail" });
    await waitFor(() => queued() !== "pending", { timeoutMs: 5000, what: "the queued statement to settle" });
    expect(queued()).toBe("rejected");
    reserved.release();
  });

  it("hands a reservation asked for during the outage a connection once Postgres is back", async () => {
    sql = onePool();
    await sql`select 1`;
    await proxy.cut();
    // The pool's one connection breaks and is reopened for the next statement, which fails: while it
    // reconnects, the reservation waits for it among the pool's queries.
    await expect(sql`select 1`).rejects.toThrow();
    const reconnecting = sql`select 1`.execute();
    // Once that statement has taken the connection to reopen it (the pool hands statements on later).
    await new Promise((resolve) => setImmediate(resolve));
    const reservation = sql.reserve();
    const reserved = track(reservation);
    await expect(reconnecting).rejects.toThrow();
    // The connection is reopened for the reservation after a backoff: Postgres is back by then.
    await proxy.restore();
    await waitFor(() => reserved() !== "pending", { timeoutMs: 10_000, what: "the reservation to settle" });
    if (reserved() === "resolved") {
      const handle = await reservation;
      expect(await handle`select 3 as n`).toEqual([{ n: 3 }]);
      handle.release();
    }
    // The pool serves statements afterwards either way.
    expect(await sql`select 4 as n`).toEqual([{ n: 4 }]);
  });
});
