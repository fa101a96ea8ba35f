import { afterEach, describe, expect, it } from "vitest";
import { SandboxClock } from "./clock.ts";

describe("SandboxClock", () => {
  let clock: SandboxClock | undefined;
  afterEach(() => clock?.close());

  it("runs timeScale times faster than real time", async () => {
    clock = new SandboxClock({ timeScale: 1000, startAt: 0 });
    await new Promise((r) => setTimeout(r, 20));
    expect(clock.now()).toBeGreaterThanOrEqual(19_000);
  });

  it("fires callbacks in due order when time jumps, and not before they are due", () => {
    clock = new SandboxClock({ timeScale: 1, startAt: 1_000_000 });
    const fired: string[] = [];
    clock.after(60_000, () => fired.push("b"));
    clock.after(10_000, () => fired.push("a"));
    const cancelled = clock.after(30_000, () => fired.push("never"));
    cancelled.cancel();
    clock.advance(9_000);
    expect(fired).toEqual([]);
    clock.advance(60_000);
    expect(fired).toEqual(["a", "b"]);
    expect(clock.nextDueIn()).toBeUndefined();
  });

  it("schedules on sandbox time: an hour of sandbox time passes in a few real ms at 3600x", async () => {
    clock = new SandboxClock({ timeScale: 3_600_000 });
    const start = Date.now();
    await new Promise<void>((resolve) => clock!.after(3600_000, resolve));
    expect(Date.now() - start).toBeLessThan(1000);
  });

  it("refuses a non-positive scale and a backwards jump", () => {
    expect(() => new SandboxClock({ timeScale: 0 })).toThrow(RangeError);
    clock = new SandboxClock();
    expect(() => clock!.advance(-1)).toThrow(RangeError);
  });
});
