// FORWARD_MAX_RPS holds exactly, measured where it matters: at the endpoint, every one-second window (sliding,
// from each arrival) holds at most the cap. Two forwarders share the cap (as two workers do), and the
// endpoint fails a share at random so retries count too.

import { createLogger } from "@loops-sync/config";
import { startForwarder } from "@loops-sync/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ForwardEndpoint, startForwardEndpoint } from "#testkit/forward-endpoint";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { writeChanges } from "../support/forward-changes.ts";

const SECRET = `whsec_${Buffer.from("forward-max-rps-test-secret-0123").toString("base64")}`;
const logger = createLogger({ name: "forward-test", level: process.env.TEST_LOG ? "debug" : "silent" });
const MAX_RPS = 10;

/** The most arrivals in any one-second window [t, t + 1000 ms), t at each arrival. */
function busiestSecond(arrivals: number[]): number {
  const sorted = [...arrivals].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (j < sorted.length && sorted[j]! < sorted[i]! + 1000) j++;
    most = Math.max(most, j - i);
  }
  return most;
}

describe("FORWARD_MAX_RPS", () => {
  let db: TestDatabase;
  let endpoint: ForwardEndpoint;
  beforeAll(async () => {
    db = await createTestDatabase();
    endpoint = await startForwardEndpoint({ secret: SECRET, failRate: 0.2 });
  });
  afterAll(async () => {
    await endpoint?.close();
    await db?.drop();
  });

  it("keeps every one-second window at the endpoint at or under the cap", { timeout: 180_000 }, async () => {
    const options = { sql: db.sql, url: endpoint.url, secret: SECRET, maxRps: MAX_RPS, logger };
    const forwarders = [await startForwarder(options), await startForwarder(options)];
    try {
      const positions = await writeChanges(db.sql, { resources: 60, perResource: 1, perTransaction: 60 });
      await waitFor(
        () => {
          const got = new Set(endpoint.accepted().map((r) => r.position));
          return positions.every((p) => got.has(p));
        },
        { timeoutMs: 150_000, what: `${positions.length} changes accepted` },
      );
    } finally {
      for (const f of forwarders) await f.stop(1000);
    }
    const busiest = busiestSecond(endpoint.requests.map((r) => r.receivedAt));
    // At the cap, not under it by a wide margin: the window is a second, not a second and a half.
    expect(busiest).toBeLessThanOrEqual(MAX_RPS);
    expect(busiest).toBeGreaterThanOrEqual(MAX_RPS - 2);
  });
});
