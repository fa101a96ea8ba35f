import { requestBudget } from "@loops-sync/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());

describe("sync.take_request_tokens", () => {
  it("keeps a tenth of the budget for live calls once background work has filled the rest", async () => {
    const budget = requestBudget(db.sql, { maxRps: 1000 });
    let background = 0;
    let refused = false;
    // At most 100 a slot: background reaches its 900 over nine slots, then is refused for the window.
    while (!refused) {
      const grant = await budget.take(1000, false);
      background += grant.granted;
      refused = grant.granted === 0 && background >= 900;
      if (!refused) await new Promise((resolve) => setTimeout(resolve, Math.max(1, grant.validMs)));
    }
    expect(background).toBeGreaterThanOrEqual(900);
    const live = await budget.take(10, true);
    expect(live.granted).toBe(10);
    const more = await budget.take(10, false);
    expect(more.granted).toBe(0);
    expect(more.waitMs).toBeGreaterThan(0);
  });

  it("never grants more than the budget within the window, however many ask", async () => {
    await db.sql`update sync.request_budget set used = array_fill(0, array[24]), slot = 0`;
    const budget = requestBudget(db.sql, { maxRps: 50 });
    const grants = await Promise.all(Array.from({ length: 40 }, () => budget.take(10, true)));
    const total = grants.reduce((n, g) => n + g.granted, 0);
    // Forty askers at once get what one second allows, not 400 (a few slots' caps, a tenth each).
    expect(total).toBeGreaterThanOrEqual(5);
    expect(total).toBeLessThanOrEqual(50);
    expect(grants.filter((g) => g.granted === 0).every((g) => g.waitMs > 0)).toBe(true);
  });
});
