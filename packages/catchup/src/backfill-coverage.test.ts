import { describe, expect, it } from "vitest";
import { backfillCoverage } from "./backfill-coverage.ts";

const base = { since: new Date(0), newest: 1000, oldestListed: 750, nextCursor: "c", seen: 10, expected: 0 };

describe("backfillCoverage", () => {
  it("is 1 on the last page", () => {
    expect(backfillCoverage({ ...base, nextCursor: null })).toBe(1);
  });
  it("prefers the replica's count, never claiming completion before the last page", () => {
    expect(backfillCoverage({ ...base, seen: 25, expected: 100 })).toBe(0.25);
    expect(backfillCoverage({ ...base, seen: 300, expected: 100 })).toBe(0.99);
  });
  it("falls back to the share of the time span listed, and to undefined without a start", () => {
    expect(backfillCoverage(base)).toBe(0.25);
    expect(backfillCoverage({ ...base, since: null })).toBeUndefined();
  });
});
