import { describe, expect, it } from "vitest";
import { checkResult, doctorExitCode } from "./doctor-check.ts";

describe("doctorExitCode", () => {
  it("is 0 when nothing failed, warnings and skipped checks included", () => {
    expect(
      doctorExitCode([
        checkResult("clock", "warn", "finding", "90 s ahead"),
        checkResult("forwarding", "skipped", "finding", "FORWARD_URL unset"),
      ]),
    ).toBe(0);
  });

  it("names what blocks the rest first: environment 2, then Postgres 3, then Loops 4, then a finding 1", () => {
    const env = checkResult("environment", "fail", "environment", "x");
    const db = checkResult("database", "fail", "database", "x");
    const token = checkResult("token", "fail", "credentials", "x");
    const scope = checkResult("scopes", "fail", "finding", "x");
    expect(doctorExitCode([scope, token, db, env])).toBe(2);
    expect(doctorExitCode([scope, token, db])).toBe(3);
    expect(doctorExitCode([scope, token])).toBe(4);
    expect(doctorExitCode([scope])).toBe(1);
  });
});
