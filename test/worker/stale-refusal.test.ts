// A 403 connection_not_active answered under a merchant's old connection, whose job goes on only after the
// merchant reconnected (probe_revoked or an event confirmed the new connection), speaks of a connection the
// merchant has left: it revokes that connection's row only, and the job runs again under the new one.
// The order batch's side of it: test/worker/order-batches.test.ts.

import type { HttpFetch } from "@loops-sync/loops-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { sandboxClient } from "../support/sandbox-client.ts";
import { createHarness, type Harness } from "../support/worker-harness.ts";

const MERCHANT = "mer_demo_2";

let h: Harness;
let release!: () => void;
let held = 0;

beforeAll(async () => {
  h = await createHarness();
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  // GET /merchant of MERCHANT is answered at once; the answer waits for the test.
  const holdingFetch: HttpFetch = async (url, init) => {
    const answer = await fetch(url, init as RequestInit);
    const headers = new Headers((init as RequestInit | undefined)?.headers);
    if (new URL(url).pathname.endsWith("/merchant") && headers.get("service-merchant-id") === MERCHANT) {
      held++;
      await gate;
    }
    return answer;
  };
  await h.worker({
    client: sandboxClient(h.sandbox, { timeoutMs: 10_000, fetch: holdingFetch }),
    merchantIds: [],
  });
});
afterAll(async () => {
  release?.();
  await h?.close();
});

describe("a refusal made under the merchant's old connection", () => {
  it("revokes only that connection when the merchant reconnected meanwhile; the job runs again", {
    timeout: 60_000,
  }, async () => {
    const before = (await h.client.forMerchant(MERCHANT).connection.get()) as { id: string };
    await h.db.sql`
      insert into sync.merchants (id, learned_from, status, connection_id)
      values (${MERCHANT}, 'config', 'active', ${before.id})`;
    h.sandbox.revokeMerchant(MERCHANT);
    await h.db.sql`
      select graphile_worker.add_job('reconcile_merchant', json_build_object('merchantId', ${MERCHANT}::text))`;
    try {
      await waitFor(() => held === 1, { what: "the reconcile's refused GET /merchant held" });
      h.sandbox.reconnectMerchant(MERCHANT);
      const after = (await h.client.forMerchant(MERCHANT).connection.get()) as { id: string };
      expect(after.id).not.toBe(before.id);
      // As a confirmed reconnect leaves it (test/worker/revoked-probe.test.ts shows how it gets there).
      await h.db.sql`update sync.merchants set connection_id = ${after.id} where id = ${MERCHANT}`;
    } finally {
      release();
    }
    await waitFor(
      async () =>
        (await h.db.sql`select 1 from sync.merchants where id = ${MERCHANT} and reconciled_at is not null`)
          .length === 1,
      { timeoutMs: 30_000, what: "the reconcile run again and complete" },
    );
    const [state] = await h.db.sql`select status, connection_id from sync.merchants where id = ${MERCHANT}`;
    expect(state?.status).toBe("active");
    const rows = await h.db.sql<{ id: string; status: string }[]>`
      select id, status from replica.connections where merchant_id = ${MERCHANT} order by status`;
    expect(rows).toEqual([
      { id: state!.connection_id, status: "active" },
      { id: expect.any(String), status: "revoked" },
    ]);
    expect(rows[1]!.id).not.toBe(state!.connection_id);
  });
});
