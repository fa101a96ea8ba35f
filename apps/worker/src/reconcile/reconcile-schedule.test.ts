import { describe, expect, it } from "vitest";
import { effectiveIntervalMs, merchantPhase, nextReconcileAt, trickleOverran } from "./reconcile-schedule.ts";

const MINUTE = 60_000;
const INTERVAL = 15 * MINUTE;
const ids = Array.from({ length: 3000 }, (_, i) => `mer_${i.toString(36).padStart(5, "0")}`);

describe("nextReconcileAt", () => {
  it("is now for a merchant never reconciled", () => {
    expect(nextReconcileAt("mer_1", null, INTERVAL, 1234)).toBe(1234);
  });

  it("keeps a merchant reconciled at its slot exactly one interval apart", () => {
    const now = Date.UTC(2026, 0, 1, 12);
    for (const id of ids.slice(0, 50)) {
      const slot = (Math.floor(now / INTERVAL) + merchantPhase(id)) * INTERVAL;
      const ranAt = new Date(slot + 3000);
      expect(nextReconcileAt(id, ranAt, INTERVAL, now)).toBe(slot + INTERVAL);
    }
  });

  it("never comes within half an interval of the last run, nor later than one and a half", () => {
    const now = Date.UTC(2026, 0, 1, 12);
    for (const id of ids.slice(0, 200)) {
      const ranAt = now - Math.floor(merchantPhase(`${id}x`) * INTERVAL);
      const next = nextReconcileAt(id, new Date(ranAt), INTERVAL, now);
      expect(next - ranAt).toBeGreaterThan(INTERVAL / 2);
      expect(next - ranAt).toBeLessThanOrEqual(1.5 * INTERVAL);
    }
  });

  it("spreads the merchants evenly over the interval by the hash of their ids", () => {
    // Every merchant reconciled at its slot of the last interval: the next interval's runs, per minute.
    const start = Date.UTC(2026, 0, 1, 12);
    const perMinute = new Array<number>(15).fill(0);
    for (const id of ids) {
      const last = (Math.floor(start / INTERVAL) - 1 + merchantPhase(id)) * INTERVAL;
      const next = nextReconcileAt(id, new Date(last + 1000), INTERVAL, start);
      const minute = Math.floor((next - start) / MINUTE);
      expect(minute).toBeGreaterThanOrEqual(0);
      expect(minute).toBeLessThan(15);
      perMinute[minute]!++;
    }
    const mean = ids.length / 15;
    for (const n of perMinute) {
      expect(n).toBeGreaterThan(mean * 0.75);
      expect(n).toBeLessThan(mean * 1.25);
    }
  });
});

describe("effectiveIntervalMs", () => {
  const sizing = { callsPerMerchant: 7, intervalMs: INTERVAL, maxRps: 25, share: 0.5 };
  it("keeps the configured interval while the merchants fit the share", () => {
    expect(effectiveIntervalMs({ ...sizing, merchants: 60 })).toBe(INTERVAL);
    // 25 × 0.5 / 1.2 ≈ 10.4 calls/s × 900 s ≈ 9,375 calls: 1,339 merchants of 7 calls fit.
    expect(effectiveIntervalMs({ ...sizing, merchants: 1339 })).toBe(INTERVAL);
  });

  it("stretches to what the merchants need at the share, and overran past twice the configured", () => {
    const stretched = effectiveIntervalMs({ ...sizing, merchants: 5000 });
    expect(stretched).toBe(3_360_000);
    expect(trickleOverran(INTERVAL, stretched)).toBe(true);
    expect(trickleOverran(INTERVAL, effectiveIntervalMs({ ...sizing, merchants: 2000 }))).toBe(false);
  });
});
