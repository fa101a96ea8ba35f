// Catch-up, backfill, verify and `loops-sync refresh` answered 403 connection_not_active under a merchant's old
// connection, with the merchant reconnected before the refusal is handled: only the old connection is revoked,
// the run fails (a job runs again), and the next run goes on under the new connection. The worker's jobs:
// test/worker/stale-refusal.test.ts.

import { runBackfill, runCatchup, verifyReplica } from "@loops-sync/catchup";
import type { HttpFetch } from "@loops-sync/loops-client";
import { STALE_REFUSAL } from "@loops-sync/replica";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { runReconcile } from "@loops-sync/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { sandboxClient } from "../support/sandbox-client.ts";
import { makeOrders } from "../support/sandbox-orders.ts";

let db: TestDatabase;
let sandbox: Sandbox;

beforeAll(async () => {
  db = await createTestDatabase();
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox?.close();
  await db?.drop();
});

/** A client whose answers to `merchantId`'s GET `path` wait for `release()` (the answer itself is taken at once). */
function holdingClient(merchantId: string, path: string) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const held = { count: 0 };
  const fetch_: HttpFetch = async (url, init) => {
    const answer = await fetch(url, init as RequestInit);
    const headers = new Headers((init as RequestInit | undefined)?.headers);
    if (new URL(url).pathname.endsWith(path) && headers.get("service-merchant-id") === merchantId) {
      held.count++;
      await gate;
    }
    return answer;
  };
  return { client: sandboxClient(sandbox, { timeoutMs: 10_000, fetch: fetch_ }), held, release };
}

/** Revokes `merchantId` upstream, lets `run` be refused, and reconnects it (as a confirmed reconnect leaves sync.merchants) before the refusal is handled. */
async function reconnectWhileRefused<T>(
  merchantId: string,
  path: string,
  run: (client: ReturnType<typeof holdingClient>["client"]) => Promise<T>,
): Promise<{ result: T; before: string; after: string }> {
  const plain = sandboxClient(sandbox);
  const before = ((await plain.forMerchant(merchantId).connection.get()) as { id: string }).id;
  await db.sql`
    insert into sync.merchants (id, learned_from, status, connection_id) values (${merchantId}, 'config', 'active', ${before})
    on conflict (id) do update set status = 'active', connection_id = excluded.connection_id`;
  const holding = holdingClient(merchantId, path);
  sandbox.revokeMerchant(merchantId);
  const running = run(holding.client);
  let after: string;
  try {
    await waitFor(() => holding.held.count === 1, { what: `the refused GET ${path} held` });
    sandbox.reconnectMerchant(merchantId);
    after = ((await plain.forMerchant(merchantId).connection.get()) as { id: string }).id;
    expect(after).not.toBe(before);
    await db.sql`update sync.merchants set connection_id = ${after} where id = ${merchantId}`;
  } finally {
    holding.release();
  }
  return { result: await running, before, after };
}

async function connections(merchantId: string) {
  return Object.fromEntries(
    (
      await db.sql<{ id: string; status: string }[]>`
        select id, status from replica.connections where merchant_id = ${merchantId}`
    ).map((r) => [r.id, r.status]),
  );
}

/** The merchant active under `after`, and only `before`, the connection the refusal was made under, revoked. */
async function expectOnlyOldRevoked(merchantId: string, before: string, after: string) {
  const [row] = await db.sql<{ status: string; connection_id: string }[]>`
    select status, connection_id from sync.merchants where id = ${merchantId}`;
  expect(row).toEqual({ status: "active", connection_id: after });
  const rows = await connections(merchantId);
  expect(rows[before]).toBe("revoked");
  expect(rows[after]).not.toBe("revoked");
}

describe("a catch-up refused under the merchant's old connection", () => {
  it("revokes only that connection; the run fails and the next one goes on", {
    timeout: 30_000,
  }, async () => {
    const merchant = "mer_demo_2";
    makeOrders(sandbox, merchant, 3);
    // Backfilled and caught up once: the refused run reads GET /events from its cursor.
    await runCatchup({ sql: db.sql, client: sandboxClient(sandbox), merchantId: merchant });
    const { result, before, after } = await reconnectWhileRefused(merchant, "/events", (client) =>
      runCatchup({ sql: db.sql, client, merchantId: merchant }),
    );
    expect(result.merchants[0]).toMatchObject({ status: "failed", error: STALE_REFUSAL });
    await expectOnlyOldRevoked(merchant, before, after);

    const next = await runCatchup({ sql: db.sql, client: sandboxClient(sandbox), merchantId: merchant });
    expect(next.merchants[0]?.status).toBe("ok");
  });
});

describe("a backfill refused under the merchant's old connection", () => {
  it("revokes only that connection; the run fails and the next one completes", {
    timeout: 30_000,
  }, async () => {
    const merchant = "mer_demo_1";
    makeOrders(sandbox, merchant, 3);
    const { result, before, after } = await reconnectWhileRefused(merchant, "/orders", (client) =>
      runBackfill({ sql: db.sql, client, merchantId: merchant }).then(
        () => "completed",
        (error: unknown) => error,
      ),
    );
    expect(result).toMatchObject({ status: 403 });
    const [run] = await db.sql<{ last_run_error: string }[]>`
      select last_run_error from sync.backfills where merchant_id = ${merchant}`;
    expect(run?.last_run_error).toBe(STALE_REFUSAL);
    await expectOnlyOldRevoked(merchant, before, after);

    const next = await runBackfill({ sql: db.sql, client: sandboxClient(sandbox), merchantId: merchant });
    expect(next.ordersSeen).toBeGreaterThanOrEqual(3);
  });
});

describe("verify and refresh refused under the merchant's old connection", () => {
  it("verify revokes only that connection and says why it did not verify", { timeout: 30_000 }, async () => {
    const merchant = "mer_demo_1";
    const { result, before, after } = await reconnectWhileRefused(merchant, "/orders", (client) =>
      verifyReplica({ sql: db.sql, client, merchantId: merchant }),
    );
    expect(result.merchants[0]?.error).toBe(STALE_REFUSAL);
    await expectOnlyOldRevoked(merchant, before, after);
  });

  it("refresh revokes only that connection and reports the merchant failed", {
    timeout: 30_000,
  }, async () => {
    const merchant = "mer_demo_2";
    const { result, before, after } = await reconnectWhileRefused(merchant, "/merchant", (client) =>
      runReconcile({ sql: db.sql, client, merchantId: merchant }),
    );
    expect(result.merchants[0]).toMatchObject({ status: "failed", error: STALE_REFUSAL });
    await expectOnlyOldRevoked(merchant, before, after);
  });
});
