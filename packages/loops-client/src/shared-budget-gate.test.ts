import { describe, expect, it } from "vitest";
import type { BudgetGrant } from "./request-gate.ts";
import { SharedBudgetGate } from "./shared-budget-gate.ts";

/** A budget that grants only what the test hands it, and records every ask. */
function scriptedBudget() {
  const asks: { want: number; live: boolean }[] = [];
  const answers: BudgetGrant[] = [];
  return {
    asks,
    grant(answer: BudgetGrant) {
      answers.push(answer);
    },
    take: async (want: number, live: boolean): Promise<BudgetGrant> => {
      asks.push({ want, live });
      return answers.shift() ?? { granted: 0, validMs: 0, waitMs: 20 };
    },
  };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("SharedBudgetGate", () => {
  it("hands a token to a live attempt before a background one that waited longer", async () => {
    const budget = scriptedBudget();
    const gate = new SharedBudgetGate({ take: budget.take, maxBatch: 10 });
    const order: string[] = [];
    const background = gate
      .acquire({ priority: "background", merchantId: "mer_a" })
      .then(() => order.push("bg"));
    const live = gate.acquire({ priority: "live", merchantId: "mer_b" }).then(() => order.push("live"));
    budget.grant({ granted: 1, validMs: 1_000, waitMs: 0 });
    budget.grant({ granted: 1, validMs: 1_000, waitMs: 0 });
    await Promise.all([background, live]);
    expect(order).toEqual(["live", "bg"]);
    // The first ask went out before the live attempt arrived; the live one still got its answer first.
    expect(budget.asks[0]).toEqual({ want: 1, live: false });
  });

  it("asks at once for a live attempt that arrives while refused background work waits out the window", async () => {
    const budget = scriptedBudget();
    const gate = new SharedBudgetGate({ take: budget.take });
    // Background work's share is full: the budget says to come back in a minute.
    budget.grant({ granted: 0, validMs: 0, waitMs: 60_000 });
    let backgroundDone = false;
    const background = gate.acquire({ priority: "background", merchantId: "mer_a" }).then(() => {
      backgroundDone = true;
    });
    await settle();
    expect(budget.asks).toEqual([{ want: 1, live: false }]);
    budget.grant({ granted: 1, validMs: 1_000, waitMs: 0 });
    // Waited out the minute before, this never resolved within the test's time.
    await gate.acquire({ priority: "live", merchantId: "mer_b" });
    expect(budget.asks[1]).toEqual({ want: 1, live: true });
    expect(backgroundDone).toBe(false);
    budget.grant({ granted: 1, validMs: 1_000, waitMs: 0 });
    await background;
  });

  it("hands tokens to live attempts first, then confirmations, then background work", async () => {
    const budget = scriptedBudget();
    const gate = new SharedBudgetGate({ take: budget.take, maxBatch: 10 });
    const order: string[] = [];
    const waiting = [
      gate.acquire({ priority: "background", merchantId: "mer_a" }).then(() => order.push("bg")),
      gate.acquire({ priority: "confirm", merchantId: "mer_a" }).then(() => order.push("confirm")),
      gate.acquire({ priority: "live", merchantId: "mer_b" }).then(() => order.push("live")),
    ];
    expect(gate.waiting).toEqual({ live: 1, confirm: 1, background: 1 });
    for (let i = 0; i < 3; i++) budget.grant({ granted: 1, validMs: 1_000, waitMs: 0 });
    await Promise.all(waiting);
    expect(order).toEqual(["live", "confirm", "bg"]);
  });

  it("rejects an aborted attempt with its reason and no longer counts it as waiting", async () => {
    const budget = scriptedBudget();
    const gate = new SharedBudgetGate({ take: budget.take });
    const controller = new AbortController();
    const waiting = gate.acquire({ priority: "background", merchantId: "mer_a", signal: controller.signal });
    await settle();
    expect(gate.waiting.background).toBe(1);
    controller.abort(new Error("shutting down"));
    await expect(waiting).rejects.toThrow("shutting down");
    expect(gate.waiting.background).toBe(0);
  });

  it("drops leased tokens once their slot has ended instead of spending them late", async () => {
    const budget = scriptedBudget();
    const gate = new SharedBudgetGate({ take: budget.take, marginMs: 0 });
    budget.grant({ granted: 5, validMs: 10, waitMs: 0 });
    await gate.acquire({ priority: "live", merchantId: undefined });
    await new Promise((resolve) => setTimeout(resolve, 30));
    budget.grant({ granted: 1, validMs: 1_000, waitMs: 0 });
    await gate.acquire({ priority: "live", merchantId: undefined });
    // The second attempt needed a new ask: the four tokens left of the first lease had lapsed.
    expect(budget.asks).toHaveLength(2);
  });

  // A round trip longer than a slot: Postgres counted 20 ms of the slot left, and its answer took 80 ms.
  const slowAnswer = (asks: number[]) => async (): Promise<BudgetGrant> => {
    asks.push(performance.now());
    if (asks.length > 1) return { granted: 0, validMs: 0, waitMs: 20 };
    await new Promise((resolve) => setTimeout(resolve, 80));
    return { granted: 1, validMs: 20, waitMs: 0 };
  };

  it("spends a lease whose answer took longer than a slot, instead of asking forever", async () => {
    const asks: number[] = [];
    const gate = new SharedBudgetGate({ take: slowAnswer(asks), marginMs: 0 });
    await gate.acquire({ priority: "live", merchantId: undefined });
    expect(asks).toHaveLength(1);
  });

  it("trusts no more of a slow round trip than maxLateMs", async () => {
    const asks: number[] = [];
    const gate = new SharedBudgetGate({ take: slowAnswer(asks), marginMs: 0, maxLateMs: 10 });
    const controller = new AbortController();
    const waiting = gate.acquire({ priority: "live", merchantId: undefined, signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Counted 10 ms after the ask, the lease ended before its answer arrived: the gate asked again.
    expect(asks.length).toBeGreaterThan(1);
    controller.abort(new Error("done"));
    await expect(waiting).rejects.toThrow("done");
  });
});
