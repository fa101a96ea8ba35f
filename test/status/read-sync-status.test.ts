import { EVENT_OUTCOMES, readSyncStatus, type SyncStatus } from "@loops-sync/status";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { type SeededSyncState, seedSyncState } from "../support/seed-sync-state.ts";

describe("readSyncStatus", () => {
  let db: TestDatabase;
  let seeded: SeededSyncState;
  let status: SyncStatus;
  beforeAll(async () => {
    db = await createTestDatabase();
    seeded = await seedSyncState(db.sql);
    status = await readSyncStatus(db.sql);
  });
  afterAll(async () => {
    await db.drop();
  });

  it("is plain JSON", () => {
    expect(JSON.parse(JSON.stringify(status))).toEqual(status);
  });

  it("reports each merchant's cursor, last webhook, lag, pending and failed events", () => {
    const now = Date.parse(status.generatedAt);
    expect(status.merchants.map((m) => m.merchantId)).toEqual(["mer_alpha", "mer_beta", "mer_gamma"]);
    for (const m of status.merchants) {
      const mine = seeded.events.filter((e) => e.merchantId === m.merchantId);
      const webhooks = mine.filter((e) => e.source === "webhook").map((e) => e.receivedAt.getTime());
      expect(m.lastWebhookAt).toBe(new Date(Math.max(...webhooks)).toISOString());
      const applied = mine
        .filter((e) => e.outcome === "applied")
        .sort((a, b) => +b.createdAt - +a.createdAt)[0]!;
      expect(m.lag.lastAppliedEventCreatedAt).toBe(applied.createdAt.toISOString());
      expect(m.lag.appliedLagSeconds).toBe(Math.round((now - applied.createdAt.getTime()) / 100) / 10);
      const pending = mine.filter((e) => e.outcome === "pending");
      expect(m.pendingEvents).toBe(pending.length);
      const oldest = Math.min(...pending.map((e) => e.receivedAt.getTime()));
      expect(m.lag.oldestPendingAgeSeconds).toBe(
        pending.length ? Math.round((now - oldest) / 100) / 10 : null,
      );
      expect(m.failedEvents).toBe(mine.filter((e) => e.outcome === "failed").length);
    }
    const [alpha, beta, gamma] = status.merchants;
    expect(alpha!.cursor.afterEventId).toBe("evt_a_07");
    expect(alpha!.lastCatchup.status).toBe("ok");
    expect(beta!.lastCatchup.status).toBe("error");
    expect(alpha!.revoked).toBe(false);
    expect(gamma!.revoked).toBe(true);
    expect(gamma!.status).toBe("revoked");
    expect(gamma!.cursor.afterEventId).toBeNull();
    // Jobs are attributed through payload.merchantId; process_events jobs carry none.
    expect(status.merchants.map((m) => [m.merchantId, m.queuedJobs, m.failedJobs])).toEqual([
      ["mer_alpha", 2, 0],
      ["mer_beta", 0, 1],
      ["mer_gamma", 0, 0],
    ]);
  });

  it("masks secrets in error texts", () => {
    const text = JSON.stringify(status);
    expect(text).not.toContain("abc123XYZ");
    expect(text).not.toContain("eyJhbGciOi");
    expect(status.merchants[1]!.lastCatchup.error).toContain("client_secret=[redacted]");
  });

  it("counts the queue from graphile-worker's jobs", () => {
    expect(status.queue).toMatchObject({ waiting: 2, scheduled: 1, running: 1, failed: 1 });
    expect(status.queue.byTask).toEqual([
      { task: "process_events", waiting: 2, scheduled: 0, running: 0, failed: 0 },
      { task: "refresh_order", waiting: 0, scheduled: 1, running: 1, failed: 1 },
    ]);
    expect(status.queue.failedJobs).toHaveLength(1);
    expect(status.queue.failedJobs[0]).toMatchObject({ task: "refresh_order", attempts: 3, maxAttempts: 3 });
    expect(status.queue.failedJobs[0]!.lastError).toContain("Bearer [redacted]");
  });

  it("counts the orders waiting in the order refresh queue, and the oldest one's wait", () => {
    expect(status.queue.ordersToRefresh).toBe(2);
    expect(status.queue.oldestOrderToRefreshSeconds).toBeGreaterThanOrEqual(89);
    expect(status.queue.oldestOrderToRefreshSeconds).toBeLessThan(120);
  });

  it("buckets the last hour's events per minute by outcome", () => {
    expect(status.eventsPerMinute).toHaveLength(60);
    const first = Date.parse(status.eventsPerMinute[0]!.minute);
    const last = Date.parse(status.eventsPerMinute.at(-1)!.minute);
    expect(last - first).toBe(59 * 60_000);
    expect(last).toBe(Math.floor(Date.parse(status.generatedAt) / 60_000) * 60_000);
    const inWindow = seeded.events.filter((e) => e.receivedAt.getTime() >= first);
    expect(inWindow.length).toBeGreaterThan(40);
    for (const bucket of status.eventsPerMinute) {
      const start = Date.parse(bucket.minute);
      for (const outcome of EVENT_OUTCOMES) {
        const want = inWindow.filter(
          (e) =>
            e.outcome === outcome &&
            e.receivedAt.getTime() >= start &&
            e.receivedAt.getTime() < start + 60_000,
        ).length;
        expect(bucket.counts[outcome], `${bucket.minute} ${outcome}`).toBe(want);
      }
    }
    for (const outcome of EVENT_OUTCOMES) {
      expect(status.eventsLastHour[outcome]).toBe(inWindow.filter((e) => e.outcome === outcome).length);
    }
  });
});
