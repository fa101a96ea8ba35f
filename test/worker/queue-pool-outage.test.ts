// The queue's pg pool against a real Postgres behind a proxy that is cut and restored: graphile-worker's
// completion statements and connects wait out an outage longer than the grace, and stop waiting at once when
// the process stops.

import { Writable } from "node:stream";
import { createLogger } from "@loops-sync/config";
import { absorbLostCompletions, createQueuePool, type QueuePool } from "@loops-sync/worker/jobs/queue-pool";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";

/** A logger whose lines the test reads: the pool's waits are the events it waits on, instead of sleeping. */
function recorder(level: "debug" | "warn") {
  const lines: string[] = [];
  const destination = new Writable({ write: (chunk, _enc, done) => done(void lines.push(String(chunk))) });
  const logger = createLogger({ name: "queue-pool-test", level, pretty: false, destination });
  const count = (text: string) => lines.filter((line) => line.includes(text)).length;
  return { logger, lines, count };
}
/** Named as graphile-worker names its completion statement, so the pool may send it again. */
const completion = { name: "complete_job/test_schema", text: "select $1::int as n", values: [7] };
const GRACE_MS = 200;

describe("the queue pool in a Postgres outage", () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let pool: QueuePool | undefined;
  /** As start-worker does: a connection lost while idle is replaced on next use, not an uncaught error. */
  let log = recorder("debug");
  const open = () => {
    log = recorder("debug");
    const made = createQueuePool({
      connectionString: throughProxy(),
      max: 2,
      graceMs: GRACE_MS,
      logger: log.logger,
    });
    made.on("error", () => {});
    made.on("connect", (client) => client.on("error", () => {}));
    return made;
  };
  const throughProxy = () => {
    const url = new URL(db.url);
    url.hostname = "127.0.0.1";
    url.port = String(proxy.port);
    return url.toString();
  };
  /** Settles to "pending" while `promise` has neither resolved nor rejected. */
  const stateOf = (promise: Promise<unknown>) =>
    Promise.race([
      promise.then(
        () => "resolved",
        () => "rejected",
      ),
      new Promise((r) => setTimeout(() => r("pending"), 0)),
    ]);

  /** Until the pool has said Postgres is away longer than the grace, and has tried twice more since. */
  const pastTheGrace = async () => {
    await waitFor(() => log.count("Postgres still away") === 1, { what: "the warning after the grace" });
    const triesAtWarning = log.count("Postgres away; waiting");
    await waitFor(() => log.count("Postgres away; waiting") >= triesAtWarning + 2, {
      what: "two more tries after the grace",
    });
  };

  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
    const target = new URL(db.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  });
  afterEach(async () => {
    await proxy.restore();
    await pool?.end().catch(() => {});
    pool = undefined;
  });
  afterAll(async () => {
    await proxy?.close();
    await db?.drop();
  });

  it("sends a completion again once Postgres is back, however long past the grace it was away", async () => {
    pool = open();
    const client = await pool.connect();
    await proxy.cut();
    // The connection it was sent on breaks, and reconnects are refused past the grace and two more attempts.
    const sent = client.query(completion);
    client.release();
    await pastTheGrace();
    expect(await stateOf(sent)).toBe("pending");
    await proxy.restore();
    expect(((await sent) as { rows: { n: number }[] }).rows).toEqual([{ n: 7 }]);
  });

  it("waits in connect() past the grace, as graphile-worker's completion asks for its connection there", async () => {
    pool = open();
    await proxy.cut();
    const connected = pool.connect();
    await pastTheGrace();
    expect(await stateOf(connected)).toBe("pending");
    await proxy.restore();
    const client = await connected;
    expect((await client.query("select 1 as one")).rows).toEqual([{ one: 1 }]);
    client.release();
  });

  it("stops waiting at once when told to, so a shutdown in an outage does not hang", async () => {
    pool = open();
    await proxy.cut();
    const connected = pool.connect();
    const outcome = connected.then(
      () => "connected",
      (error: Error) => error.message,
    );
    // Backoff grows to 2 s between attempts: stop once the wait is at its longest.
    await waitFor(() => log.count('"retryInMs":2000') > 0, { what: "a wait of 2 s", timeoutMs: 30_000 });
    expect(await stateOf(connected)).toBe("pending");
    const asked = Date.now();
    pool.stopWaiting();
    expect(await outcome).toMatch(/ECONNREFUSED/);
    expect(Date.now() - asked).toBeLessThan(1000);
  });

  it("tells of a job claim whose connection broke before its answer, and never sends it again", async () => {
    pool = open();
    const lost: string[] = [];
    pool.claims.on("lost", (poolId) => lost.push(poolId));
    const client = await pool.connect();
    // Named as graphile-worker names its claim; its first value is the pool id the job is locked by.
    const claim = client.query({
      name: "get_job/test_schema",
      text: "select $1::text as pool, pg_sleep(30)",
      values: ["pool-lost"],
    });
    const outcome = claim.then(
      () => "answered",
      (error: Error) => error.message,
    );
    await waitFor(
      async () => {
        const [row] = await db.sql<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity where query like '%pg_sleep(30)%' and pid <> pg_backend_pid()`;
        return row!.n > 0;
      },
      { what: "the claim to reach Postgres" },
    );
    await proxy.cut();
    expect(await outcome).toMatch(/terminated/i);
    client.release(true);
    expect(lost).toEqual(["pool-lost"]);
    // Any other statement that breaks is not a claim.
    await proxy.restore();
    const other = await pool.connect();
    const plain = other.query({
      name: "other/test_schema",
      text: "select $1::text, pg_sleep(30)",
      values: ["x"],
    });
    await waitFor(
      async () => {
        const [row] = await db.sql<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity where query like '%$1::text, pg_sleep(30)%' and pid <> pg_backend_pid()`;
        return row!.n > 0;
      },
      { what: "the other statement to reach Postgres" },
    );
    await proxy.cut();
    await plain.catch(() => {});
    other.release(true);
    expect(lost).toEqual(["pool-lost"]);
  });

  it("while stopping, logs a completion that failed unawaited instead of ending the process", async () => {
    const { logger: recording, count } = recorder("warn");
    pool = open();
    const client = await pool.connect();
    await proxy.cut();
    const stopAbsorbing = absorbLostCompletions(recording);
    try {
      // As graphile-worker's worker loop does (withPgClient): nobody awaits the completion's promise.
      void client.query(completion).finally(() => client.release());
      pool.stopWaiting();
      await waitFor(() => count("was not recorded while stopping") > 0, {
        what: "the lost completion to be logged",
      });
    } finally {
      stopAbsorbing();
    }
    // Any other rejection is not absorbed.
    const stopAgain = absorbLostCompletions(recording);
    try {
      expect(() => process.emit("unhandledRejection", new Error("a bug"), Promise.resolve())).toThrow(
        "a bug",
      );
    } finally {
      stopAgain();
    }
  });
});
