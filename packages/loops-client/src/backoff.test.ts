import { describe, expect, it } from "vitest";
import { backoffMs } from "./backoff.ts";

describe("backoffMs", () => {
  const low = () => 0;
  const high = () => 1;
  it("doubles from the base up to the cap, each wait between half and all of it", () => {
    const policy = { baseMs: 1000, capMs: 300_000 };
    expect([0, 1, 2, 3].map((i) => backoffMs(i, policy, high))).toEqual([1000, 2000, 4000, 8000]);
    expect([0, 1, 2, 3].map((i) => backoffMs(i, policy, low))).toEqual([500, 1000, 2000, 4000]);
    expect(backoffMs(40, policy, high)).toBe(300_000);
    expect(backoffMs(2, { baseMs: 100, capMs: 250 }, high)).toBe(250);
  });
  it("without jitter, is the doubling itself", () => {
    const policy = { baseMs: 100, capMs: 2000, jitter: false };
    expect([0, 1, 2, 3, 4, 5, 60].map((i) => backoffMs(i, policy, low))).toEqual([
      100, 200, 400, 800, 1600, 2000, 2000,
    ]);
  });
  it("treats a negative index as the first retry", () => {
    expect(backoffMs(-3, { baseMs: 100, capMs: 2000, jitter: false })).toBe(100);
  });
});
