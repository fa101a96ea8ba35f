import { describe, expect, it } from "vitest";
import { backoffDelayMs, parseRetryAfter, resolveRetryPolicy } from "./retry-policy.ts";

describe("parseRetryAfter", () => {
  const now = Date.parse("2026-11-22T06:00:00Z");
  it("reads delay-seconds, rounding fractions up", () => {
    expect(parseRetryAfter("7", now)).toBe(7);
    expect(parseRetryAfter(" 0 ", now)).toBe(0);
    expect(parseRetryAfter("1.2", now)).toBe(2);
  });
  it("reads an HTTP date as the seconds until then, never negative", () => {
    expect(parseRetryAfter("Sun, 22 Nov 2026 06:00:42 GMT", now)).toBe(42);
    expect(parseRetryAfter("Sun, 22 Nov 2026 05:59:00 GMT", now)).toBe(0);
  });
  it("ignores what it cannot read", () => {
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter("-3", now)).toBeUndefined();
  });
});

describe("backoffDelayMs", () => {
  const policy = resolveRetryPolicy({ baseDelayMs: 200, maxDelayMs: 5_000 });
  it("doubles per retry, with jitter inside [step/2, step]", () => {
    expect(backoffDelayMs(0, policy, () => 0)).toBe(100);
    expect(backoffDelayMs(0, policy, () => 1)).toBe(200);
    expect(backoffDelayMs(3, policy, () => 0)).toBe(800);
    expect(backoffDelayMs(3, policy, () => 1)).toBe(1600);
  });
  it("never exceeds maxDelayMs", () => {
    expect(backoffDelayMs(30, policy, () => 1)).toBe(5_000);
  });
});

describe("resolveRetryPolicy", () => {
  it("applies the documented defaults and rejects nonsense", () => {
    expect(resolveRetryPolicy()).toEqual({
      maxAttempts: 4,
      baseDelayMs: 200,
      maxDelayMs: 5_000,
      maxRetryAfterSeconds: 30,
    });
    expect(() => resolveRetryPolicy({ maxAttempts: 0 })).toThrow(/maxAttempts/);
    expect(() => resolveRetryPolicy({ baseDelayMs: -1 })).toThrow(/baseDelayMs/);
  });
});
