import { createServer, type Server, Socket } from "node:net";
import { connect, pipelinedTransaction, type Sql } from "@loops-sync/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

/**
 * A TCP proxy in front of Postgres that counts round trips: each time the client sends after the server has
 * answered is one (the client's writes before any answer travel together).
 */
async function roundTripProxy(
  target: URL,
): Promise<{ url: string; roundTrips(): number; close(): Promise<void> }> {
  let trips = 0;
  let answered = true;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client).add(upstream);
    upstream.connect(Number(target.port || 5432), target.hostname);
    client.on("data", (chunk) => {
      if (answered) trips++;
      answered = false;
      upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      answered = true;
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    roundTrips: () => trips,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("pipelinedTransaction", () => {
  let db: TestDatabase;
  let one: Sql;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.sql`create table public.pipelined (n int primary key, tx bigint not null)`;
    // One connection: a transaction left open or aborted would show in the next statement.
    one = connect(db.url, { max: 1 });
  });
  afterAll(async () => {
    await one.end({ timeout: 5 });
    await db.drop();
  });
  const rows = async () =>
    (await db.sql<{ n: number }[]>`select n from public.pipelined order by n`).map((r) => r.n);

  it("commits the work and its tail in one transaction and returns the work's result", async () => {
    await db.sql`truncate public.pipelined`;
    const result = await pipelinedTransaction(one, async (tx) => {
      const [first] = await tx<{ tx: string }[]>`
        insert into public.pipelined values (1, txid_current()) returning tx`;
      const tail = tx`insert into public.pipelined values (2, txid_current())`.execute();
      return { result: first!.tx, tail: [tail] };
    });
    const stored = await db.sql<{ n: number; tx: string }[]>`select n, tx from public.pipelined order by n`;
    expect(stored.map((r) => r.n)).toEqual([1, 2]);
    expect(stored[1]!.tx).toBe(result);
    expect(stored[0]!.tx).toBe(result);
  });

  it("throws the error of a failed tail statement, and nothing of the transaction is committed", async () => {
    await db.sql`truncate public.pipelined`;
    await expect(
      pipelinedTransaction(one, async (tx) => {
        await tx`insert into public.pipelined values (1, txid_current())`;
        const fails = tx`insert into public.pipelined values (1, txid_current())`.execute();
        const after = tx`insert into public.pipelined values (3, txid_current())`.execute();
        return { result: undefined, tail: [fails, after] };
      }),
    ).rejects.toMatchObject({ code: "23505" });
    expect(await rows()).toEqual([]);
    // The connection went back to the pool outside any transaction: what it writes now, others see.
    await one`insert into public.pipelined values (7, txid_current())`;
    expect(await rows()).toEqual([7]);
  });

  it("rolls back when the work throws, and the connection is usable again", async () => {
    await db.sql`truncate public.pipelined`;
    await expect(
      pipelinedTransaction(one, async (tx) => {
        await tx`insert into public.pipelined values (1, txid_current())`;
        throw new Error("the work gave up");
      }),
    ).rejects.toThrow("the work gave up");
    await expect(
      pipelinedTransaction(one, async (tx) => {
        await tx`select 1 / 0`;
        return { result: undefined };
      }),
    ).rejects.toMatchObject({ code: "22012" });
    await pipelinedTransaction(one, async (tx) => {
      await tx`insert into public.pipelined values (5, txid_current())`;
      return { result: undefined };
    });
    expect(await rows()).toEqual([5]);
  });

  it("fails with the connection's error when the backend dies mid-transaction, without writing to it again", async () => {
    await db.sql`truncate public.pipelined`;
    const doomed = connect(db.url, { max: 1 });
    let pid = 0;
    const broken = pipelinedTransaction(doomed, async (tx) => {
      const [me] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
      pid = me!.pid;
      const sent = tx`insert into public.pipelined values (1, txid_current())`.execute();
      sent.catch(() => {});
      await tx`select pg_sleep(30)`;
      return { result: undefined, tail: [sent] };
    });
    const failure = broken.then(
      () => undefined,
      (error: unknown) => error as { code?: string } | undefined,
    );
    await waitFor(
      async () => {
        const [row] = await db.sql<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity where pid = ${pid} and query like '%pg_sleep%'`;
        return row!.n === 1;
      },
      { what: "the statement running" },
    );
    await db.sql`select pg_terminate_backend(${pid})`;
    // The session's end is what the work saw (Postgres's 57P01, or postgres.js's code for the closed socket,
    // whichever comes first). A ROLLBACK written to that connection would throw from a timer (an uncaught
    // TypeError in postgres.js 3.4.9, which vitest reports); none is written.
    expect(["57P01", "CONNECTION_CLOSED"]).toContain((await failure)?.code);
    expect(await rows()).toEqual([]);
    // The pool's one slot is reopened for the next transaction (with patches/postgres@3.4.9.patch).
    await pipelinedTransaction(doomed, async (tx) => {
      await tx`insert into public.pipelined values (2, txid_current())`;
      return { result: undefined };
    });
    expect(await rows()).toEqual([2]);
    await doomed.end({ timeout: 5 });
  });

  it("takes two round trips for two dependent steps, where sql.begin takes four", async () => {
    await db.sql`truncate public.pipelined`;
    const proxy = await roundTripProxy(new URL(db.url));
    const sql = connect(proxy.url, { max: 1 });
    const pipelined = (n: number) =>
      pipelinedTransaction(sql, async (tx) => {
        const [row] = await tx<{ n: number }[]>`
          insert into public.pipelined values (${n}, txid_current()) returning n`;
        const tail = tx`insert into public.pipelined values (${row!.n + 1}, txid_current())`.execute();
        return { result: undefined, tail: [tail] };
      });
    const begun = (n: number) =>
      sql.begin(async (tx) => {
        const [row] = await tx<{ n: number }[]>`
          insert into public.pipelined values (${n}, txid_current()) returning n`;
        await tx`insert into public.pipelined values (${row!.n + 1}, txid_current())`;
      });
    const roundTrips = async (work: () => Promise<unknown>) => {
      const before = proxy.roundTrips();
      await work();
      return proxy.roundTrips() - before;
    };
    try {
      // Each statement's first run asks Postgres for its parameter types (a round trip of its own).
      await pipelined(1);
      await begun(3);
      expect(await roundTrips(() => pipelined(5))).toBe(2);
      expect(await roundTrips(() => begun(7))).toBe(4);
      expect(await rows()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    } finally {
      await sql.end({ timeout: 5 });
      await proxy.close();
    }
  });
});
