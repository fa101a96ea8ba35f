// Backfill and the retention fallback: GET /orders?updated_since= against the sandbox, real Postgres.

import { readBackfillCheckpoint, readEventCursor, runBackfill, runCatchup } from "@loops-sync/catchup";
import type { LoopsClient } from "@loops-sync/loops-client";
import { EVENT_RETENTION_MS, type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { expectReplicaEqualsTruth, makeOrders, sandboxClient } from "../support/sandbox-orders.ts";

describe("backfill", () => {
  let db: TestDatabase;
  let sandbox: Sandbox;
  let client: LoopsClient;
  let applicationId: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0 });
    client = sandboxClient(sandbox);
    applicationId = sandbox.credentials.applicationId;
  });

  afterAll(async () => {
    await sandbox?.close();
    await db?.drop();
  });

  it("resumes an interrupted run at its checkpoint, then leaves a watermark the next run starts from", async () => {
    const merchant = "mer_demo_2";
    makeOrders(sandbox, merchant, 45);
    const stop = new AbortController();
    await expect(
      runBackfill({
        sql: db.sql,
        client,
        merchantId: merchant,
        pageSize: 10,
        signal: stop.signal,
        onProgress: (p) => {
          if (p.pages === 2) stop.abort(new Error("operator pressed Ctrl-C"));
        },
      }),
    ).rejects.toThrow("Ctrl-C");
    const interrupted = await readBackfillCheckpoint(db.sql, merchant);
    expect(interrupted?.run?.pages).toBe(2);
    expect(interrupted?.run?.pageCursor).toBeTruthy();

    client.resetStats();
    const resumed = await runBackfill({ sql: db.sql, client, merchantId: merchant, pageSize: 10 });
    expect(resumed.resumed).toBe(true);
    expect(resumed.ordersSeen).toBe(45);
    // Only the three pages not yet applied were asked for.
    expect(client.stats.byEndpoint["GET /orders"]).toBe(3);
    await expectReplicaEqualsTruth(db.sql, sandbox, merchant);

    // The watermark is upstream time: the newest updated_at seen on the first page, minus the margin.
    const newest = Math.max(...sandbox.truth.orders(merchant).map((o) => Date.parse(o.updated_at)));
    expect(Date.parse(resumed.watermark!)).toBeLessThanOrEqual(newest);
    expect(Date.parse(resumed.watermark!)).toBeGreaterThan(newest - 10 * 60_000);

    // An order updated after the run is listed by the next one, which starts at that watermark.
    const [someOrder] = sandbox.truth.orders(merchant).filter((o) => o.status === "placed");
    sandbox.advanceOrder(someOrder!.id);
    const next = await runBackfill({ sql: db.sql, client, merchantId: merchant });
    expect(next.since).toBe(resumed.watermark);
    expect(next.ordersChanged).toBe(1);
    await expectReplicaEqualsTruth(db.sql, sandbox, merchant);
  });

  it("starts the run over when upstream refuses the checkpoint's page cursor", async () => {
    const merchant = "mer_demo_2";
    const stop = new AbortController();
    await expect(
      runBackfill({
        sql: db.sql,
        client,
        merchantId: merchant,
        since: "2000-01-01T00:00:00Z",
        pageSize: 10,
        signal: stop.signal,
        onProgress: () => stop.abort(new Error("stopped")),
      }),
    ).rejects.toThrow("stopped");
    await db.sql`update sync.backfills set run_page_cursor = 'no-longer-valid' where merchant_id = ${merchant}`;
    const result = await runBackfill({ sql: db.sql, client, merchantId: merchant, pageSize: 10 });
    expect(result.ordersSeen).toBe(sandbox.truth.orders(merchant).length);
    expect((await readBackfillCheckpoint(db.sql, merchant))?.run).toBeUndefined();
    await expectReplicaEqualsTruth(db.sql, sandbox, merchant);
  });

  it("falls back to a backfill when the cursor is older than the 30-day retention", async () => {
    const merchant = "mer_demo_1";
    await runCatchup({ sql: db.sql, client, applicationId, merchantId: merchant });
    const old = makeOrders(sandbox, merchant, 20);
    await runCatchup({ sql: db.sql, client, applicationId, merchantId: merchant });
    const cursor = await readEventCursor(db.sql, merchant);
    expect(cursor?.afterEventId).toBeTruthy();

    // The receiver and the worker are down for 31 days: the cursor's event leaves the log.
    sandbox.clock.advance(EVENT_RETENTION_MS + 24 * 3600_000);
    for (const id of old.slice(0, 5)) {
      try {
        sandbox.advanceOrder(id);
      } catch {
        // already final
      }
    }
    makeOrders(sandbox, merchant, 10);
    expect(sandbox.truth.events(merchant).some((e) => e.id === cursor?.afterEventId)).toBe(false);

    const result = await runCatchup({ sql: db.sql, client, applicationId, merchantId: merchant });
    const run = result.merchants[0]!;
    expect(run.status).toBe("cursor_expired");
    expect(run.backfill?.since).toBeTruthy();
    expect(run.backfill!.ordersChanged).toBeGreaterThanOrEqual(10);
    const [row] = await db.sql<{ last_run_status: string; last_run_error: string }[]>`
      select last_run_status, last_run_error from sync.cursors where merchant_id = ${merchant}`;
    expect(row?.last_run_status).toBe("cursor_expired");
    expect(row?.last_run_error).toMatch(/30-day event retention/);
    await expectReplicaEqualsTruth(db.sql, sandbox, merchant);
    // The cursor was re-anchored in the retained log: the next run is an ordinary one.
    const again = await runCatchup({ sql: db.sql, client, applicationId, merchantId: merchant });
    expect(again.merchants[0]?.status).toBe("ok");
    expect(again.eventsStored).toBe(0);
  });
});
