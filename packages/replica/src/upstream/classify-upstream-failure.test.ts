import { unstorableReason } from "@loops-sync/db";
import { LoopsError } from "@loops-sync/loops-client";
import { describe, expect, it } from "vitest";
import { invalidOrder } from "../orders/order-input.ts";
import { classifyUpstreamFailure } from "./classify-upstream-failure.ts";

const apiError = (
  status: number,
  code: string,
  { retryAfter, errors }: { retryAfter?: number; errors?: { field: string; message: string }[] } = {},
) =>
  LoopsError.fromAnswer({ status, code, title: code, method: "GET", route: "/orders", retryAfter, errors });

describe("classifyUpstreamFailure", () => {
  it("turns 429 into a pause of Retry-After seconds (a default when absent or negative)", () => {
    expect(classifyUpstreamFailure(apiError(429, "rate_limited", { retryAfter: 7 }))).toEqual({
      kind: "rate_limited",
      retryAfterSeconds: 7,
    });
    expect(classifyUpstreamFailure(apiError(429, "rate_limited"))).toEqual({
      kind: "rate_limited",
      retryAfterSeconds: 5,
    });
    expect(classifyUpstreamFailure({ status: 429, retryAfter: -1 })).toEqual({
      kind: "rate_limited",
      retryAfterSeconds: 5,
    });
  });

  it("revokes only on 403 connection_not_active", () => {
    expect(classifyUpstreamFailure(apiError(403, "connection_not_active"))).toEqual({ kind: "revoked" });
    expect(classifyUpstreamFailure(apiError(403, "scope_not_granted")).kind).toBe("paused");
  });

  it("pauses the merchant on 403 scope_not_granted, without flagging the application", () => {
    expect(classifyUpstreamFailure(apiError(403, "scope_not_granted"))).toEqual({
      kind: "paused",
      scope: "merchant",
      cause: "scope_not_granted",
      message: expect.any(String),
      // The probe calls the refused route again.
      route: "/orders",
    });
  });

  it("pauses and flags the application on 401, 403 insufficient_scope or suspended", () => {
    expect(classifyUpstreamFailure(apiError(401, "unauthorized"))).toEqual({
      kind: "paused",
      scope: "application",
      cause: "unauthorized",
      message: expect.any(String),
      refused: true,
      route: "/orders",
    });
    for (const code of ["insufficient_scope", "application_suspended"]) {
      const failure = classifyUpstreamFailure(apiError(403, code));
      expect(failure).toMatchObject({ kind: "paused", scope: "application", cause: code, refused: true });
    }
    expect(classifyUpstreamFailure(apiError(403, "connection_not_active")).refused).toBeUndefined();
    expect(classifyUpstreamFailure(apiError(404, "not_found")).refused).toBeUndefined();
    expect(classifyUpstreamFailure(apiError(503, "upstream_unavailable")).refused).toBeUndefined();
  });

  it("sets an extra resource aside on a scope refusal off the hot path, and pauses on the hot path", () => {
    const at = (code: string, method: string, route: string) =>
      classifyUpstreamFailure(LoopsError.fromAnswer({ status: 403, code, title: code, method, route }));
    expect(at("scope_not_granted", "GET", "/brands")).toEqual({
      kind: "set_aside",
      scope: "merchant",
      resource: "brands",
      cause: "scope_not_granted",
      message: expect.any(String),
    });
    expect(at("insufficient_scope", "GET", "/brands/{brand_id}/menu")).toMatchObject({
      kind: "set_aside",
      scope: "application",
      resource: "menus",
    });
    expect(at("insufficient_scope", "GET", "/brands/{brand_id}/menu").refused).toBeUndefined();
    for (const [route, resource] of [
      ["/jobs/{job_id}", "jobs"],
      ["/merchant", "merchant"],
      ["/merchant/business-profile", "business_profile"],
      ["/channels", "channels"],
      // Locations and their channel connections (locations:read): an order is mirrored without them.
      ["/locations", "locations"],
      ["/locations/{location_id}/channel-connections", "locations"],
    ]) {
      expect(at("scope_not_granted", "GET", route!)).toMatchObject({ kind: "set_aside", resource });
    }
    for (const route of ["/orders", "/orders/{order_id}", "/events", "/connection", "{auth_url}"]) {
      expect(at("insufficient_scope", "GET", route)).toMatchObject({ kind: "paused", scope: "application" });
      expect(at("scope_not_granted", "POST", route)).toMatchObject({ kind: "paused", scope: "merchant" });
    }
    // Other 403s on an extra resource keep their meaning.
    expect(at("application_suspended", "GET", "/brands").kind).toBe("paused");
    expect(at("connection_not_active", "GET", "/brands").kind).toBe("revoked");
  });

  it("records 404, 410 and invalid bodies without retrying, with the status when there was one", () => {
    expect(classifyUpstreamFailure(apiError(404, "not_found"))).toMatchObject({
      kind: "permanent",
      status: 404,
    });
    expect(classifyUpstreamFailure(apiError(410, "gone"))).toMatchObject({ kind: "permanent", status: 410 });
    const invalid = classifyUpstreamFailure(
      LoopsError.badResponse("GET", "/orders/{order_id}", "version", "bad"),
    );
    expect(invalid).toMatchObject({ kind: "permanent", refusedFields: [] });
    expect(invalid).not.toHaveProperty("status");
    expect(classifyUpstreamFailure(invalidOrder("version", "negative", "ord_1")).kind).toBe("permanent");
    expect(classifyUpstreamFailure({ code: "invalid_argument", message: "bad limit" })).toEqual({
      kind: "permanent",
      message: "bad limit",
      refusedFields: [],
    });
  });

  it("names the fields a 400 refuses (a cursor upstream no longer accepts), and only for a 400", () => {
    const errors = [
      { field: "after", message: "too old" },
      { field: "limit", message: "too big" },
    ];
    expect(classifyUpstreamFailure(apiError(400, "invalid_request", { errors }))).toMatchObject({
      kind: "permanent",
      status: 400,
      refusedFields: ["after", "limit"],
    });
    expect(classifyUpstreamFailure(apiError(400, "invalid_request"))).toMatchObject({ refusedFields: [] });
    expect(classifyUpstreamFailure(apiError(422, "invalid_request", { errors }))).toMatchObject({
      refusedFields: [],
    });
  });

  it("lets 5xx, 408, timeouts, network errors and the unknown back off", () => {
    expect(classifyUpstreamFailure(apiError(503, "upstream_unavailable"))).toEqual({ kind: "transient" });
    expect(classifyUpstreamFailure(apiError(408, "request_timeout"))).toEqual({ kind: "transient" });
    expect(classifyUpstreamFailure(LoopsError.timeout("GET", "/orders", 10_000)).kind).toBe("transient");
    expect(classifyUpstreamFailure(LoopsError.network("GET", "/orders")).kind).toBe("transient");
    expect(classifyUpstreamFailure(new Error("socket hang up")).kind).toBe("transient");
    expect(classifyUpstreamFailure({ status: 304 }).kind).toBe("transient");
    expect(classifyUpstreamFailure("weird").kind).toBe("transient");
    expect(classifyUpstreamFailure(null).kind).toBe("transient");
  });

  it("records data Postgres refuses (SQLSTATE class 22 or 54) without retrying", () => {
    const refused = Object.assign(new Error("unsupported Unicode escape sequence"), {
      name: "PostgresError",
      code: "22P05",
    });
    expect(classifyUpstreamFailure(refused)).toEqual({
      kind: "permanent",
      message: "Postgres refused the data (22P05): unsupported Unicode escape sequence",
      refusedFields: [],
    });
    const tooBig = Object.assign(new Error("total size of jsonb array elements exceeds the maximum"), {
      name: "PostgresError",
      code: "54000",
    });
    expect(classifyUpstreamFailure(tooBig)).toEqual({
      kind: "permanent",
      message: "Postgres refused the data (54000): total size of jsonb array elements exceeds the maximum",
      refusedFields: [],
    });
    const down = Object.assign(new Error("connection refused"), { name: "PostgresError", code: "57P01" });
    expect(classifyUpstreamFailure(down).kind).toBe("transient");
  });

  it("fails exactly what unstorableReason calls content: the receiver, catch-up and the worker agree", () => {
    const content = ["22P05", "22023", "2200N", "54000", "54001", "54011"];
    const other = ["53100", "57P01", "57014", "40001", "40P01", "55P03", "42P01", "08006", "XX000"];
    for (const code of [...content, ...other]) {
      const error = Object.assign(new Error(`refused with ${code}`), { name: "PostgresError", code });
      expect({ code, permanent: classifyUpstreamFailure(error).kind === "permanent" }).toEqual({
        code,
        permanent: unstorableReason(error) !== undefined,
      });
      expect(unstorableReason(error) !== undefined).toBe(content.includes(code));
    }
  });
});
