import { describe, expect, it } from "vitest";
import { parseRetryAfterMs } from "./parse-retry-after.ts";

describe("parseRetryAfterMs", () => {
  const now = Date.parse("2026-11-28T06:00:00Z");
  it("reads delay-seconds and an HTTP date", () => {
    expect(parseRetryAfterMs("3", now)).toBe(3000);
    expect(parseRetryAfterMs(" 120 ", now)).toBe(120_000);
    expect(parseRetryAfterMs("Sat, 28 Nov 2026 06:00:07 GMT", now)).toBe(7000);
  });
  it("gives nothing for an absent, unreadable, zero or past value", () => {
    for (const value of [
      null,
      "",
      "0",
      "-3",
      "1.5",
      "soon",
      "Sat, 28 Nov 2026 05:59:00 GMT",
      "Sat, 99 Foo",
    ]) {
      expect(parseRetryAfterMs(value, now), String(value)).toBeUndefined();
    }
  });
});
