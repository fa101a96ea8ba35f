import { describe, expect, it } from "vitest";
import { compareOrder, describeDifference } from "./compare-order.ts";

const m = "mer_1";
describe("compareOrder", () => {
  it("names each kind of difference", () => {
    expect(compareOrder(m, "ord_1", { version: 2, status: "accepted" }, null)?.kind).toBe("missing");
    expect(compareOrder(m, "ord_1", null, { version: 2, status: "accepted" })?.kind).toBe("extra");
    expect(
      compareOrder(m, "ord_1", { version: 3, status: "ready" }, { version: 2, status: "accepted" })?.kind,
    ).toBe("older");
    expect(
      compareOrder(m, "ord_1", { version: 2, status: "accepted" }, { version: 2, status: "cancelled" })?.kind,
    ).toBe("status_mismatch");
  });

  it("accepts equal copies and a replica newer than the listed copy", () => {
    expect(
      compareOrder(m, "ord_1", { version: 2, status: "accepted" }, { version: 2, status: "accepted" }),
    ).toBe(undefined);
    expect(
      compareOrder(m, "ord_1", { version: 2, status: "accepted" }, { version: 3, status: "ready" }),
    ).toBe(undefined);
  });

  it("describes a difference on one line with both sides", () => {
    const d = compareOrder(m, "ord_1", { version: 3, status: "ready" }, null)!;
    expect(describeDifference(d)).toBe("mer_1 ord_1 missing: replica absent, upstream v3 ready");
  });
});
