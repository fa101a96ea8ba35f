import type { EventEnvelope } from "@loops-sync/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { sandboxClient } from "../support/sandbox-client.ts";
import { createHarness, type Harness, outcomes, settled } from "../support/worker-harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  // The sandbox only knows the spec's statuses; a status added upstream later is simulated by rewriting
  // the real HTTP answer of GET /orders/{id} on its way into the client.
  const fetchWithNewStatus: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (!/\/v1\/orders\/ord_/.test(String(input)) || !response.ok) return response;
    const body = (await response.json()) as Record<string, unknown>;
    const history = [
      ...(body.status_history as unknown[]),
      { status: "handed_to_drone", at: new Date().toISOString() },
    ];
    return Response.json(
      { ...body, status: "handed_to_drone", status_history: history },
      { headers: response.headers },
    );
  };
  const client = sandboxClient(h.sandbox, {
    fetch: fetchWithNewStatus,
  });
  await h.worker({ client });
});
afterAll(async () => {
  await h?.close();
});

describe("worker: tolerance of new upstream values", () => {
  it("stores an order whose status it has never heard of, and the event is applied", async () => {
    const order = h.sandbox.createOrder({ merchantId: "mer_demo_1" });
    const ids = await h.ingest((e: EventEnvelope) => e.data.order_id === order.id);
    await waitFor(() => settled(h.db, ids), { what: "event settled" });
    expect(await outcomes(h.db, ids)).toEqual({ [ids[0]!]: "applied" });
    const [stored] = await h.db.sql`select status from replica.orders where id = ${order.id}`;
    expect(stored).toEqual({ status: "handed_to_drone" });
    const history = await h.db.sql`
      select status from replica.order_status_history where order_id = ${order.id} order by position`;
    expect(history.at(-1)).toEqual({ status: "handed_to_drone" });
  });
});
