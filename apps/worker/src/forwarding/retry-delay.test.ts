import { describe, expect, it } from "vitest";
import { retryDelayMs } from "./retry-delay.ts";

describe("retryDelayMs", () => {
  it("doubles from the base up to the cap, each wait between half and all of it", () => {
    const low = () => 0;
    const high = () => 1;
    expect([1, 2, 3, 4].map((a) => retryDelayMs(a, { random: high }))).toEqual([1000, 2000, 4000, 8000]);
    expect([1, 2, 3, 4].map((a) => retryDelayMs(a, { random: low }))).toEqual([500, 1000, 2000, 4000]);
    expect(retryDelayMs(40, { random: high })).toBe(300_000);
    expect(retryDelayMs(3, { baseMs: 100, capMs: 250, random: high })).toBe(250);
  });
});
