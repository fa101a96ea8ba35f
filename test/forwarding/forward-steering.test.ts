// What the endpoint's operator steers, end to end in one process: real Postgres, a real HTTP endpoint on
// loopback verifying with the standardwebhooks package, and the worker's forwarder between them. Secrets
// rotated without downtime (a signature by each), and a 429 or 503 with Retry-After holding every delivery,
// of this forwarder and of the others sharing the queue.

import { createLogger } from "@loops-sync/config";
import { type Forwarder, startForwarder } from "@loops-sync/worker";
import { afterEach, describe, expect, it } from "vitest";
import { type ForwardAnswer, type ForwardEndpoint, startForwardEndpoint } from "#testkit/forward-endpoint";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { expectEveryChangeDelivered, writeChanges } from "../support/forward-changes.ts";
import { runCli } from "../support/operator-run.ts";

const OLD = `whsec_${Buffer.from("forward-steering-old-secret-32by").toString("base64")}`;
const NEW = `whsec_${Buffer.from("forward-steering-new-secret-32by").toString("base64")}`;
const logger = createLogger({ name: "forward-test", level: process.env.TEST_LOG ? "debug" : "silent" });

describe("forwarding the endpoint's operator steers", () => {
  let db: TestDatabase | undefined;
  let endpoint: ForwardEndpoint | undefined;
  const forwarders: Forwarder[] = [];
  afterEach(async () => {
    await Promise.all(forwarders.splice(0).map((f) => f.stop(1000)));
    await endpoint?.close();
    await db?.drop();
  });

  const forward = async (url: string, secret: string, maxInFlight = 1) => {
    forwarders.push(
      await startForwarder({
        sql: db!.sql,
        url,
        secret,
        timeoutMs: 5000,
        retryBaseMs: 100,
        retryCapMs: 500,
        pollIntervalMs: 200,
        maxInFlight,
        logger,
      }),
    );
  };

  const everyAccepted = (e: ForwardEndpoint, positions: readonly number[]) =>
    waitFor(() => new Set(e.accepted().map((r) => r.position)).size === positions.length, {
      timeoutMs: 60_000,
      what: `${positions.length} changes accepted`,
    });

  it("signs every request with each of several FORWARD_SECRETs, so either verifies", async () => {
    db = await createTestDatabase();
    endpoint = await startForwardEndpoint({ secret: OLD, alsoVerifyWith: [NEW] });
    await forward(endpoint.url, `${OLD} ${NEW}`, 4);
    const positions = await writeChanges(db.sql, { resources: 4, perResource: 2 });
    await everyAccepted(endpoint, positions);
    expectEveryChangeDelivered(endpoint, positions);
    for (const r of endpoint.requests) {
      expect(r.validFor, r.webhookId).toEqual([true]);
      expect(r.signatureHeader).toMatch(/^v1,[A-Za-z0-9+/]+=* v1,[A-Za-z0-9+/]+=*$/);
    }
  });

  /** Answers the first request `first`, every later one 204; returns the endpoint. */
  const answeringFirst = async (first: () => ForwardAnswer) =>
    startForwardEndpoint({ secret: OLD, answer: ({ index }) => (index === 0 ? first() : undefined) });

  it("holds deliveries for a 429's Retry-After in seconds, then sends everything", async () => {
    db = await createTestDatabase();
    endpoint = await answeringFirst(() => ({ status: 429, headers: { "retry-after": "2" } }));
    // One in flight: the request after the 429 is sent after its answer was read.
    await forward(endpoint.url, OLD);
    const positions = await writeChanges(db.sql, { resources: 6, perResource: 2 });
    await everyAccepted(endpoint, positions);
    expectEveryChangeDelivered(endpoint, positions);
    const [refused, next] = endpoint.requests;
    expect(refused?.status).toBe(429);
    // Without the hold the next change (another resource's) goes at once; with it, not before 2 s.
    expect(next!.receivedAt - refused!.answeredAt).toBeGreaterThanOrEqual(2000);
    const [progress] = await db.sql<
      { last_failure: string }[]
    >`select last_failure from sync.forward_progress`;
    expect(progress?.last_failure).toBe("HTTP 429");
  });

  it("holds every forwarder sharing the queue for a 503's Retry-After as an HTTP date", async () => {
    db = await createTestDatabase();
    // Whole seconds (an HTTP date has no fraction), 4 to 5 s ahead.
    const until = Math.ceil((Date.now() + 4000) / 1000) * 1000;
    endpoint = await answeringFirst(() => ({
      status: 503,
      headers: { "retry-after": new Date(until).toUTCString() },
    }));
    await forward(endpoint.url, OLD);
    const positions = await writeChanges(db.sql, { resources: 6, perResource: 2 });
    // The hold is recorded for the other workers; one started now must wait it out too.
    const [held] = await waitFor(
      async () => {
        const rows = await db!.sql<{ held_until: Date }[]>`
          select held_until from sync.forward_progress where held_until is not null`;
        return rows.length > 0 ? rows : undefined;
      },
      { what: "the hold recorded" },
    );
    // The DB adds the hold to its own now() when the answer is recorded, a moment after it was read.
    expect(held!.held_until.getTime()).toBeGreaterThanOrEqual(until - 1000);
    await forward(endpoint.url, OLD, 8);
    await everyAccepted(endpoint, positions);
    expectEveryChangeDelivered(endpoint, positions);
    expect(endpoint.requests[0]?.status).toBe(503);
    for (const r of endpoint.requests.slice(1)) {
      expect(r.receivedAt, `${r.webhookId} sent inside the hold`).toBeGreaterThanOrEqual(until);
    }
  });

  it("bounds a Retry-After far away (maxHoldMs)", async () => {
    db = await createTestDatabase();
    endpoint = await answeringFirst(() => ({ status: 429, headers: { "retry-after": "86400" } }));
    forwarders.push(
      await startForwarder({
        sql: db.sql,
        url: endpoint.url,
        secret: OLD,
        retryBaseMs: 100,
        pollIntervalMs: 200,
        maxInFlight: 1,
        maxHoldMs: 3000,
        logger,
      }),
    );
    const positions = await writeChanges(db.sql, { resources: 3, perResource: 1 });
    await everyAccepted(endpoint, positions);
    const [refused, next] = endpoint.requests;
    expect(refused?.status).toBe(429);
    expect(next!.receivedAt - refused!.answeredAt).toBeGreaterThanOrEqual(3000);
  });

  it("lifts the hold when the operator runs `loops-sync forward retry`", { timeout: 90_000 }, async () => {
    db = await createTestDatabase();
    endpoint = await answeringFirst(() => ({ status: 429, headers: { "retry-after": "3600" } }));
    await forward(endpoint.url, OLD);
    const positions = await writeChanges(db.sql, { resources: 3, perResource: 1 });
    await waitFor(
      async () =>
        (await db!.sql`select 1 from sync.forward_progress where held_until > now() + interval '5 minutes'`)
          .length > 0,
      { what: "an hour's hold, bounded to ten minutes" },
    );
    const retried = await runCli(["forward", "retry"], { DATABASE_URL: db.url });
    expect(retried.code, retried.stderr).toBe(0);
    await everyAccepted(endpoint, positions);
    const [progress] = await db.sql<
      { held_until: Date | null }[]
    >`select held_until from sync.forward_progress`;
    expect(progress?.held_until).toBeNull();
  });
});
