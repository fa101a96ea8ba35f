import { describe, expect, it } from "vitest";
import type { Claimed, ClaimedEvent } from "./claim-orders.ts";
import { type OrderPlan, planOrder } from "./plan-order.ts";

const STATUSES = ["placed", "accepted", "preparing", "ready", "completed"];

/** A status event from version v-1 to v, `age` seconds in the queue. */
function statusEvent(id: string, version: number, age = 0): ClaimedEvent {
  return {
    id,
    type: "order.status_changed",
    version,
    previous_status: STATUSES[version - 2] ?? null,
    status: STATUSES[version - 1] ?? null,
    at: "2026-11-28T12:00:00.000Z",
    age_seconds: age,
    queued_at: "2026-11-28T12:00:00.000Z",
  };
}

function claim(storedVersion: number | null, events: ClaimedEvent[]): Claimed {
  return {
    order_id: "ord_1",
    version: Math.max(...events.map((e) => e.version ?? 0)),
    replica_version: storedVersion,
    replica_status: storedVersion === null ? null : STATUSES[storedVersion - 1]!,
    events,
    rows: events.length,
    event_ids: events.map((e) => e.id),
    claimed_at: new Date(),
    queued_seconds: 0,
    taken_at: 0,
  };
}

/** Every claimed event ends somewhere: the fetch covers all, else each is settled or held, never both. */
function accounted(c: Claimed, plan: OrderPlan): void {
  if (plan.fetch) return;
  const held = (plan.hold?.events ?? []).map((e) => e.id);
  expect([...plan.settles, ...held].sort()).toEqual(c.event_ids.toSorted());
}

describe("planOrder", () => {
  it("applies a chain from the stored row, settling a repeated older event with it", () => {
    const c = claim(2, [statusEvent("e2again", 2), statusEvent("e3", 3), statusEvent("e4", 4)]);
    const plan = planOrder(c, "mer_1");
    expect(plan.chain?.steps.map((s) => s.version)).toEqual([3, 4]);
    expect(plan.settles.toSorted()).toEqual(["e2again", "e3", "e4"]);
    accounted(c, plan);
  });

  it("holds events past a young gap, and still settles the events the replica covers", () => {
    const c = claim(2, [statusEvent("e2again", 2), statusEvent("e4", 4)]);
    const plan = planOrder(c, "mer_1", 1000);
    expect(plan).toMatchObject({ fetch: false, settles: ["e2again"] });
    expect(plan.chain).toBeUndefined();
    expect(plan.hold?.events.map((e) => e.id)).toEqual(["e4"]);
    accounted(c, plan);
  });

  it("applies what chains before a young gap and holds the rest", () => {
    const c = claim(1, [statusEvent("e2", 2), statusEvent("e4", 4)]);
    const plan = planOrder(c, "mer_1", 1000);
    expect(plan.chain?.steps.map((s) => s.version)).toEqual([2]);
    expect(plan.hold?.events.map((e) => e.id)).toEqual(["e4"]);
    accounted(c, plan);
  });

  it("fetches past a gap that has waited long enough, a new order, and an event without a version", () => {
    expect(planOrder(claim(2, [statusEvent("e4", 4, 2)]), "mer_1", 1000).fetch).toBe(true);
    expect(planOrder(claim(null, [statusEvent("e1", 1)]), "mer_1").fetch).toBe(true);
    expect(planOrder(claim(1, [{ ...statusEvent("e2", 2), version: null }]), "mer_1").fetch).toBe(true);
  });
});
