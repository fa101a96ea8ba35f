import { LoopsError } from "@loops-sync/loops-client";
import { classifyUpstreamFailure } from "@loops-sync/replica";
import { describe, expect, it } from "vitest";
import { isCursorRefused, isFieldRefused } from "./catchup-error.ts";

const refusal = (status: number, code: string, errors?: { field: string; message: string }[]) =>
  classifyUpstreamFailure(
    LoopsError.fromAnswer({ status, code, title: code, method: "GET", route: "/events", errors }),
  );

describe("isCursorRefused", () => {
  it("is true for a 400 naming the after field, and for 410", () => {
    expect(isCursorRefused(refusal(400, "invalid_request", [{ field: "after", message: "too old" }]))).toBe(
      true,
    );
    expect(isCursorRefused(refusal(410, "gone"))).toBe(true);
  });
  it("is false for other 400s, 5xx and non-API errors", () => {
    expect(isCursorRefused(refusal(400, "invalid_request", [{ field: "limit", message: "bad" }]))).toBe(
      false,
    );
    expect(isCursorRefused(refusal(503, "upstream_unavailable"))).toBe(false);
    expect(isCursorRefused(classifyUpstreamFailure(new Error("boom")))).toBe(false);
  });
});

describe("isFieldRefused", () => {
  it("is true only for a 400 whose field errors name that field", () => {
    const cursor = refusal(400, "invalid_request", [{ field: "cursor", message: "expired" }]);
    expect(isFieldRefused(cursor, "cursor")).toBe(true);
    expect(isFieldRefused(cursor, "after")).toBe(false);
    expect(isFieldRefused(refusal(410, "gone"), "cursor")).toBe(false);
    expect(isFieldRefused(refusal(503, "upstream_unavailable"), "cursor")).toBe(false);
  });
});
