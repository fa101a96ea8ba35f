// The partner-side receiver example against the real forwarder: it verifies, applies each change once and in
// order per resource, answers a replayed request as a duplicate, and refuses a tampered one.

import { createLogger } from "@loops-sync/config";
import { signWebhook } from "@loops-sync/webhooks";
import { type Forwarder, startForwarder } from "@loops-sync/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import {
  type ForwardedChange,
  type Outcome,
  startForwardReceiver,
} from "../../examples/forward-receiver/forward-receiver.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { writeChanges } from "../support/forward-changes.ts";

const SECRET = `whsec_${Buffer.from("forward-receiver-example-secret!").toString("base64")}`;

describe("examples/forward-receiver", () => {
  let db: TestDatabase;
  let forwarder: Forwarder;
  let receiver: Awaited<ReturnType<typeof startForwardReceiver>>;
  const applied: ForwardedChange[] = [];
  const outcomes: Outcome[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    receiver = await startForwardReceiver({
      secret: SECRET,
      port: 0,
      apply: (change) => void applied.push(change),
      onOutcome: (outcome) => void outcomes.push(outcome),
    });
    forwarder = await startForwarder({
      sql: db.sql,
      url: receiver.url,
      secret: SECRET,
      pollIntervalMs: 200,
      logger: createLogger({ name: "forward-test", level: "silent" }),
    });
  });
  afterAll(async () => {
    await forwarder?.stop(1000);
    await new Promise((r) => receiver?.server.close(r));
    await db?.drop();
  });

  it("applies every forwarded change once, in order per resource", async () => {
    const positions = await writeChanges(db.sql, { resources: 5, perResource: 4 });
    await waitFor(() => applied.length === positions.length, { what: "every change applied" });
    expect(applied.map((c) => c.position).sort((a, b) => a - b)).toEqual(positions);
    for (let r = 0; r < 5; r++) {
      const versions = applied.filter((c) => c.resource_id === `chn_${r}`).map((c) => c.version);
      expect(versions).toEqual([1, 2, 3, 4]);
    }
  });

  it("answers a replayed request as a duplicate and refuses a tampered one", async () => {
    const first = applied[0]!;
    const body = JSON.stringify(first);
    const post = (headers: Record<string, string>, text = body) =>
      fetch(receiver.url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: text,
      });
    const headers = signWebhook({
      id: `chg_${first.position}`,
      timestamp: new Date(),
      body,
      secrets: [SECRET],
    });
    expect((await post(headers)).status).toBe(204);
    expect(outcomes.at(-1)).toBe("duplicate");
    const tampered = await post(headers, body.replace('"channel"', '"order"'));
    expect(tampered.status).toBe(401);
    expect(outcomes.at(-1)).toBe("invalid_signature");
    expect(applied.filter((c) => c.position === first.position)).toHaveLength(1);
  });
});
