import { LoopsApiError } from "@loops-sync/loops-client";
import { describe, expect, it } from "vitest";
import { isConnectionRevoked, isCursorRefused } from "./catchupError.ts";

const apiError = (status: number, code: string, errors?: { field: string; message: string }[]) =>
  new LoopsApiError({ status, code, title: code, method: "GET", route: "/events", errors });

describe("isCursorRefused", () => {
  it("is true for a 400 naming the after field, and for 410", () => {
    expect(isCursorRefused(apiError(400, "invalid_request", [{ field: "after", message: "too old" }]))).toBe(
      true,
    );
    expect(isCursorRefused(apiError(410, "gone"))).toBe(true);
  });
  it("is false for other 400s, 5xx and non-API errors", () => {
    expect(isCursorRefused(apiError(400, "invalid_request", [{ field: "limit", message: "bad" }]))).toBe(
      false,
    );
    expect(isCursorRefused(apiError(503, "upstream_unavailable"))).toBe(false);
    expect(isCursorRefused(new Error("boom"))).toBe(false);
  });
});

describe("isConnectionRevoked", () => {
  it("is true only for 403 connection_not_active", () => {
    expect(isConnectionRevoked(apiError(403, "connection_not_active"))).toBe(true);
    expect(isConnectionRevoked(apiError(403, "insufficient_scope"))).toBe(false);
  });
});
