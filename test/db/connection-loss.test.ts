// postgres.js 3.4.9 threw a TypeError from a timer (ending the process) when a transaction wrote to a
// connection whose backend had died, and handed the dead session's error to the next query after a
// reconnect (porsager/postgres#1208). patches/postgres@3.4.9.patch fixes both; these tests fail without it
// (vitest reports the uncaught TypeError, or the next statement fails).
import { connect, type Sql } from "@loops-sync/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

/**
 * The error code `work` fails with (handled at once, so its failure is not unhandled while the test goes on):
 * the session's end is Postgres's 57P01 or postgres.js's CONNECTION_CLOSED, whichever arrives first.
 */
async function codeOfFailure(work: Promise<unknown>): Promise<string | undefined> {
  return await work.then(
    () => "no failure",
    (error: unknown) => (error as { code?: string } | undefined)?.code,
  );
}

describe("a transaction whose backend dies (a Postgres restart, an administrator's kill)", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.sql`create table public.lost (n int primary key)`;
  });
  afterAll(async () => {
    await db.drop();
  });
  const rows = async () =>
    (await db.sql<{ n: number }[]>`select n from public.lost order by n`).map((r) => r.n);
  const backendIn = async (state: string, query: string) => {
    const [row] = await db.sql<{ pid: number }[]>`
      select pid from pg_stat_activity
      where application_name = 'loops-sync-lost' and state = ${state} and query like ${query}`;
    return row?.pid;
  };

  /** A pool of one connection: every statement after the loss runs on the slot that lost its backend. */
  const onePool = (): Sql => connect(db.url, { max: 1, applicationName: "loops-sync-lost" });

  it("killed mid-statement: the transaction fails, nothing is committed, the pool's next statements run", async () => {
    await db.sql`truncate public.lost`;
    const sql = onePool();
    try {
      const failed = sql.begin(async (tx) => {
        await tx`insert into public.lost values (1)`;
        await tx`select pg_sleep(30)`;
      });
      const code = codeOfFailure(failed);
      const pid = await waitFor(() => backendIn("active", "%pg_sleep%"), { what: "the statement running" });
      await db.sql`select pg_terminate_backend(${pid})`;
      expect(["57P01", "CONNECTION_CLOSED"]).toContain(await code);
      expect(await rows()).toEqual([]);
      await sql`insert into public.lost values (2)`;
      await sql.begin(async (tx) => {
        await tx`insert into public.lost values (3)`;
      });
      expect(await rows()).toEqual([2, 3]);
    } finally {
      await sql.end({ timeout: 5 });
    }
  });

  it("killed while idle in the transaction: its next statement fails instead of ending the process", async () => {
    await db.sql`truncate public.lost`;
    const sql = onePool();
    try {
      const killed = Promise.withResolvers<void>();
      const failed = sql.begin(async (tx) => {
        await tx`insert into public.lost values (1)`;
        await killed.promise;
        await tx`insert into public.lost values (2)`;
      });
      const code = codeOfFailure(failed);
      const pid = await waitFor(() => backendIn("idle in transaction", "%insert%"), {
        what: "the transaction idle",
      });
      await db.sql`select pg_terminate_backend(${pid})`;
      // The transaction fails as soon as the pool sees its connection close, while its scope still waits:
      // the scope's next statement goes to a connection known to be closed.
      let failedWith: string | undefined;
      void code.then((c) => {
        failedWith = c;
      });
      await waitFor(() => failedWith !== undefined, {
        what: "the transaction failed by the lost connection",
      });
      killed.resolve();
      expect(["57P01", "CONNECTION_CLOSED"]).toContain(failedWith);
      expect(await rows()).toEqual([]);
      await sql`insert into public.lost values (3)`;
      expect(await rows()).toEqual([3]);
    } finally {
      await sql.end({ timeout: 5 });
    }
  });
});
