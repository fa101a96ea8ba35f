import {
  LoopsApiError,
  LoopsNetworkError,
  LoopsResponseError,
  LoopsTimeoutError,
} from "@loops-sync/loops-client";
import { InvalidOrderError } from "@loops-sync/replica";
import { describe, expect, it } from "vitest";
import { classifyUpstreamFailure } from "./upstreamFailure.ts";

const apiError = (status: number, code: string, retryAfter?: number) =>
  new LoopsApiError({ status, code, title: code, method: "GET", route: "/orders/{order_id}", retryAfter });

describe("classifyUpstreamFailure", () => {
  it("turns 429 into a pause of Retry-After seconds (a default when absent)", () => {
    expect(classifyUpstreamFailure(apiError(429, "rate_limited", 7))).toEqual({
      kind: "rate_limited",
      retryAfterSeconds: 7,
    });
    expect(classifyUpstreamFailure(apiError(429, "rate_limited"))).toEqual({
      kind: "rate_limited",
      retryAfterSeconds: 5,
    });
  });

  it("revokes only on 403 connection_not_active", () => {
    expect(classifyUpstreamFailure(apiError(403, "connection_not_active"))).toEqual({ kind: "revoked" });
    expect(classifyUpstreamFailure(apiError(403, "scope_not_granted")).kind).toBe("permanent");
  });

  it("records 404 and invalid bodies without retrying", () => {
    expect(classifyUpstreamFailure(apiError(404, "not_found")).kind).toBe("permanent");
    expect(
      classifyUpstreamFailure(new LoopsResponseError("GET", "/orders/{order_id}", "version", "bad")).kind,
    ).toBe("permanent");
    expect(classifyUpstreamFailure(new InvalidOrderError("version", "negative", "ord_1")).kind).toBe(
      "permanent",
    );
  });

  it("lets 5xx, 401, timeouts, network errors and the unknown back off", () => {
    expect(classifyUpstreamFailure(apiError(503, "upstream_unavailable")).kind).toBe("transient");
    expect(classifyUpstreamFailure(apiError(401, "unauthorized")).kind).toBe("transient");
    expect(classifyUpstreamFailure(new LoopsTimeoutError("GET", "/orders", 10_000)).kind).toBe("transient");
    expect(classifyUpstreamFailure(new LoopsNetworkError("GET", "/orders")).kind).toBe("transient");
    expect(classifyUpstreamFailure(new Error("socket hang up")).kind).toBe("transient");
    expect(classifyUpstreamFailure("weird").kind).toBe("transient");
  });

  it("records data Postgres refuses (SQLSTATE class 22) without retrying", () => {
    const refused = Object.assign(new Error("unsupported Unicode escape sequence"), {
      name: "PostgresError",
      code: "22P05",
    });
    expect(classifyUpstreamFailure(refused).kind).toBe("permanent");
    const down = Object.assign(new Error("connection refused"), { name: "PostgresError", code: "57P01" });
    expect(classifyUpstreamFailure(down).kind).toBe("transient");
  });
});
