import { describe, expect, it } from "vitest";
import { isConnectionLoss } from "./queue-pool.ts";

describe("isConnectionLoss", () => {
  it("takes a lost or refused connection for Postgres going away", () => {
    expect(isConnectionLoss(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isConnectionLoss(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }))).toBe(
      true,
    );
    expect(
      isConnectionLoss({ code: "57P01", message: "terminating connection due to administrator command" }),
    ).toBe(true);
    expect(isConnectionLoss({ code: "08006", message: "connection failure" })).toBe(true);
    expect(isConnectionLoss({ code: "53300", message: "sorry, too many clients already" })).toBe(true);
    expect(
      isConnectionLoss(new Error("Client has encountered a connection error and is not queryable")),
    ).toBe(true);
  });

  it("leaves Postgres's answers alone: they would come back the same", () => {
    expect(
      isConnectionLoss({ code: "23505", message: "duplicate key value violates unique constraint" }),
    ).toBe(false);
    expect(isConnectionLoss({ code: "40P01", message: "deadlock detected" })).toBe(false);
    expect(isConnectionLoss(new Error("Cannot use a pool after calling end on the pool"))).toBe(false);
    expect(isConnectionLoss(null)).toBe(false);
  });
});
