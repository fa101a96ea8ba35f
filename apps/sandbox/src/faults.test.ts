import { describe, expect, it } from "vitest";
import { FaultInjector } from "./faults.ts";

describe("FaultInjector", () => {
  it("rolls each API fault at its rate, the same sequence for the same seed", () => {
    const roll = (seed: number) => {
      const f = new FaultInjector({
        seed,
        api429Rate: 0.2,
        api5xxRate: 0.1,
        apiResetRate: 0.05,
        apiSlowRate: 0.05,
      });
      return Array.from({ length: 10_000 }, () => f.rollApi()?.kind ?? "none");
    };
    const a = roll(3);
    const share = (kind: string) => a.filter((k) => k === kind).length / a.length;
    expect(share("rate_limited")).toBeCloseTo(0.2, 1);
    expect(share("server_error")).toBeCloseTo(0.1, 1);
    expect(share("reset")).toBeCloseTo(0.05, 1);
    expect(share("slow")).toBeCloseTo(0.05, 1);
    expect(roll(3)).toEqual(a);
    expect(roll(4)).not.toEqual(a);
  });

  it("keeps webhook dice apart from API dice", () => {
    const f = new FaultInjector({ seed: 9, webhookDropRate: 0.5 });
    const g = new FaultInjector({ seed: 9, webhookDropRate: 0.5 });
    for (let i = 0; i < 100; i++) f.rollApi();
    const plans = (x: FaultInjector) => Array.from({ length: 50 }, () => x.planWebhook().drop);
    expect(plans(f)).toEqual(plans(g));
  });

  it("refuses unknown fault names and out-of-range values, naming the field", () => {
    const f = new FaultInjector();
    expect(() => f.set({ api429Rate: 2 })).toThrow(/api429Rate/);
    expect(() => f.set({ nope: 1 } as never)).toThrow();
    expect(f.get().api429Rate).toBe(0);
  });
});
