// The endpoint's bounds as an operator sets them, on a real `loops-sync worker` process: FORWARD_MAX_IN_FLIGHT
// caps the requests open at once, FORWARD_MAX_RPS the requests per second, and a FORWARD_SECRET of two
// secrets (a rotation) signs every request with each. The real HTTP endpoint verifies with the
// standardwebhooks package; the worker's log shows neither secret.

import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { type ForwardEndpoint, startForwardEndpoint } from "#testkit/forward-endpoint";
import { recordSecrets } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { writeChanges } from "../support/forward-changes.ts";
import { workerWorld } from "../support/worker-world.ts";

const RUN_ID = `forward-bounds-${randomBytes(4).toString("hex")}`;
const OLD = `whsec_${randomBytes(24).toString("base64")}`;
const NEW = `whsec_${randomBytes(24).toString("base64")}`;
const MAX_RPS = 2;

describe("FORWARD_MAX_IN_FLIGHT, FORWARD_MAX_RPS and two FORWARD_SECRETs on a worker process", () => {
  const w = workerWorld(RUN_ID, "forward-bounds");
  let endpoint: ForwardEndpoint | undefined;
  afterAll(async () => {
    await endpoint?.close();
  });

  it("keeps the endpoint within both bounds and signs with each secret", { timeout: 240_000 }, async () => {
    const { db } = w;
    // Slow answers, so more than two would be open at once if the worker let them.
    endpoint = await startForwardEndpoint({ secret: OLD, alsoVerifyWith: [NEW], answerDelayMs: 400 });
    recordSecrets(`${RUN_ID}-forward`, [OLD, NEW, "query-token"]);
    const worker = await w.procs.spawn({
      name: `${RUN_ID}-worker`,
      args: ["worker"],
      env: w.env({
        FORWARD_URL: endpoint.url,
        FORWARD_SECRET: `${OLD} ${NEW}`,
        FORWARD_MAX_IN_FLIGHT: "2",
        FORWARD_MAX_RPS: String(MAX_RPS),
        CATCHUP_CRON: "0 0 1 1 *",
      }),
    });
    await worker.waitForLine(/"msg":"forwarding started"/, 60_000);
    const positions = await writeChanges(db.sql, { resources: 30, perResource: 1, perTransaction: 30 });
    await waitFor(
      () => {
        const got = new Set(endpoint!.accepted().map((r) => r.position));
        return positions.every((p) => got.has(p));
      },
      { timeoutMs: 180_000, what: `${positions.length} changes accepted` },
    );
    const requests = [...endpoint.requests].sort((a, b) => a.receivedAt - b.receivedAt);
    expect(endpoint.maxConcurrent()).toBe(2);
    // At MAX_RPS a second, N requests span at least (N - MAX_RPS - 1) / MAX_RPS s (a second's budget and a
    // slot's at the start); a second more is left for a late first arrival. Uncapped, two at a time, they
    // would take N × 0.4 s / 2, under half of it.
    const span = requests.at(-1)!.receivedAt - requests[0]!.receivedAt;
    expect(span).toBeGreaterThanOrEqual(((requests.length - MAX_RPS - 1) / MAX_RPS - 1) * 1000);
    for (const r of requests) {
      expect(r.signatureValid, r.webhookId).toBe(true);
      expect(r.validFor, r.webhookId).toEqual([true]);
    }
    await worker.kill("SIGTERM");
    const log = readFileSync(worker.logFile, "utf8");
    expect(log).toContain(`"maxInFlight":2,"maxRps":2,"msg":"forwarding started"`);
    for (const secret of [OLD, NEW, OLD.slice(6), NEW.slice(6), "query-token"])
      expect(log).not.toContain(secret);
  });
});
