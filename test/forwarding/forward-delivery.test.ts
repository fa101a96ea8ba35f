// Forwarding end to end in one process: real Postgres, a real HTTP endpoint on loopback that checks every
// signature with the standardwebhooks package, and the worker's forwarder between them.

import { createLogger } from "@loops-sync/config";
import { recordChanges } from "@loops-sync/db";
import { type Forwarder, startForwarder } from "@loops-sync/worker";
import { afterEach, describe, expect, it } from "vitest";
import { type ForwardEndpoint, startForwardEndpoint } from "#testkit/forward-endpoint";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { expectEveryChangeDelivered, writeChanges } from "../support/forward-changes.ts";

const SECRET = `whsec_${Buffer.from("forward-delivery-test-secret-32b").toString("base64")}`;
const logger = createLogger({ name: "forward-test", level: process.env.TEST_LOG ? "debug" : "silent" });

describe("forwarding", () => {
  let db: TestDatabase | undefined;
  let endpoint: ForwardEndpoint | undefined;
  const forwarders: Forwarder[] = [];
  afterEach(async () => {
    await Promise.all(forwarders.splice(0).map((f) => f.stop(1000)));
    await endpoint?.close();
    await db?.drop();
  });

  async function setUp(
    endpointOptions: { failRate?: number; answerDelayMs?: number } = {},
    forwarderCount = 1,
  ) {
    db = await createTestDatabase();
    endpoint = await startForwardEndpoint({ secret: SECRET, ...endpointOptions });
    for (let i = 0; i < forwarderCount; i++) {
      forwarders.push(
        await startForwarder({
          sql: db.sql,
          url: endpoint.url,
          secret: SECRET,
          timeoutMs: 2000,
          retryBaseMs: 100,
          retryCapMs: 1000,
          pollIntervalMs: 200,
          maxInFlight: 8,
          logger,
        }),
      );
    }
    return { db, endpoint };
  }

  const delivered = (e: ForwardEndpoint, positions: readonly number[]) =>
    waitFor(() => new Set(e.accepted().map((r) => r.position)).size === positions.length, {
      timeoutMs: 60_000,
      what: `${positions.length} changes accepted`,
    });

  it("sends every change signed, with the change's columns and the row as mirrored", async () => {
    const { db, endpoint } = await setUp();
    await db.sql`insert into replica.channels (id, raw) values ('chn_data', '{"id":"chn_data","name":"Talabat"}')`;
    await db.sql.begin((tx) =>
      recordChanges(tx, [
        {
          resource: "channel",
          resourceId: "chn_data",
          merchantId: null,
          operation: "insert",
          source: "reconcile",
        },
        {
          resource: "channel",
          resourceId: "chn_gone",
          merchantId: null,
          operation: "delete",
          source: "reconcile",
        },
      ]),
    );
    const positions = (
      await db.sql<{ position: number }[]>`select position from replica.changes order by 1`
    ).map((r) => r.position);
    await delivered(endpoint, positions);
    expectEveryChangeDelivered(endpoint, positions);
    const [insert, remove] = positions.map((p) => endpoint.accepted().find((r) => r.position === p)!.body);
    expect(insert).toMatchObject({
      position: positions[0],
      resource: "channel",
      resource_id: "chn_data",
      merchant_id: null,
      operation: "insert",
      source: "reconcile",
      data: { id: "chn_data", name: "Talabat" },
    });
    expect(typeof insert?.changed_at).toBe("string");
    expect(remove).toMatchObject({ operation: "delete", resource_id: "chn_gone", data: null });
    // Acknowledged changes leave the queue (the answer is recorded just after the endpoint sent it).
    await waitFor(
      async () => {
        const [left] = await db.sql<{ n: number }[]>`select count(*)::int as n from sync.forward_deliveries`;
        return left?.n === 0;
      },
      { what: "the delivery queue empty" },
    );
  });

  it("delivers everything in order per resource through ~10 % random 500s", async () => {
    const { db, endpoint } = await setUp({ failRate: 0.1 });
    const positions = await writeChanges(db.sql, { resources: 20, perResource: 15 });
    await delivered(endpoint, positions);
    const duplicates = expectEveryChangeDelivered(endpoint, positions);
    expect(endpoint.requests.some((r) => r.status === 500)).toBe(true);
    expect(duplicates).toBeLessThanOrEqual(0.05);
  });

  it("delivers everything through an 8 s outage of the endpoint", { timeout: 90_000 }, async () => {
    const { db, endpoint } = await setUp();
    const before = await writeChanges(db.sql, { resources: 10, perResource: 3 });
    await delivered(endpoint, before);
    await endpoint.down();
    const during = await writeChanges(db.sql, { resources: 10, perResource: 5 });
    // The outage itself: the forwarder keeps failing to connect meanwhile.
    await new Promise((r) => setTimeout(r, 8000));
    await endpoint.up();
    const positions = [...before, ...during];
    await delivered(endpoint, positions);
    const duplicates = expectEveryChangeDelivered(endpoint, positions);
    expect(duplicates).toBeLessThanOrEqual(0.05);
    const [progress] = await db.sql<
      { last_failure: string }[]
    >`select last_failure from sync.forward_progress`;
    expect(progress?.last_failure).toMatch(/connection failed/);
  });

  it("shares the work between two forwarders without sending a change from both at once", async () => {
    const { db, endpoint } = await setUp({ answerDelayMs: 20 }, 2);
    const positions = await writeChanges(db.sql, { resources: 16, perResource: 6 });
    await delivered(endpoint, positions);
    expect(expectEveryChangeDelivered(endpoint, positions)).toBe(0);
  });
});
