import { describe, expect, it } from "vitest";
import { checkClock } from "./check-clock.ts";
import { createLoopsClock } from "./loops-clock.ts";

describe("checkClock", () => {
  it("is ok within 60 s, warns beyond, fails beyond the webhook tolerance", () => {
    expect(checkClock(0.4, 3, 300)).toMatchObject({
      status: "ok",
      detail: expect.stringMatching(/agrees with ours/),
    });
    expect(checkClock(-59, 1, 300).status).toBe("ok");
    expect(checkClock(90, 1, 300)).toMatchObject({
      status: "warn",
      detail: expect.stringMatching(/is 90 s ahead of ours/),
    });
    expect(checkClock(-301, 1, 300)).toMatchObject({
      status: "fail",
      area: "finding",
      detail: expect.stringMatching(/is 301 s behind ours.*refuses every signed webhook/),
      fix: expect.stringMatching(/NTP/),
    });
    expect(checkClock(undefined, 0, 300).status).toBe("skipped");
  });
});

describe("createLoopsClock", () => {
  const answer = (date: string | null) => ({
    ok: true,
    status: 200,
    statusText: "OK",
    headers: { get: (name: string) => (name === "date" ? date : null) },
    text: async () => "",
    json: async () => ({}),
  });

  it("takes the median skew of the answers' Date headers, counting the second's truncation", async () => {
    const t = Date.parse("2026-11-28T10:00:00.000Z");
    const dates = [
      "Sat, 28 Nov 2026 10:02:00 GMT",
      "Sat, 28 Nov 2026 10:02:00 GMT",
      null,
      "Sat, 28 Nov 2026 09:00:00 GMT",
    ];
    const clock = createLoopsClock(
      async () => answer(dates.shift() ?? null),
      () => t,
    );
    const init = { method: "GET", headers: {}, signal: new AbortController().signal };
    for (let i = 0; i < 4; i++) await clock.fetch("http://x", init);
    expect(clock.samples()).toBe(3);
    expect(clock.skewSeconds()).toBe(120.5);
  });
});
