import { describe, expect, it } from "vitest";
import { type RosterMerchant, selectMerchants } from "./merchant-roster.ts";

const merchant = (id: string, more: Partial<RosterMerchant> = {}): RosterMerchant => ({
  id,
  configured: false,
  status: "active",
  revoked: false,
  cursor: null,
  ...more,
});

describe("selectMerchants", () => {
  const roster = [
    merchant("mer_a"),
    merchant("mer_b", { configured: true }),
    merchant("mer_c"),
    merchant("mer_d", { revoked: true, status: "revoked" }),
    merchant("mer_e"),
  ];

  it("takes configured merchants first, then learned ones at random, never a revoked one", () => {
    const first = selectMerchants(roster, { sample: 3, random: () => 0 });
    const other = selectMerchants(roster, { sample: 3, random: () => 0.99 });
    expect(first.checked[0]?.id).toBe("mer_b");
    expect(first.checked.map((m) => m.id)).not.toEqual(other.checked.map((m) => m.id));
    for (const s of [first, other]) {
      expect(s.checked).toHaveLength(3);
      expect(s.candidates).toBe(4);
      expect(s.checked.map((m) => m.id)).not.toContain("mer_d");
      expect(s.revoked.map((m) => m.id)).toEqual(["mer_d"]);
    }
  });

  it("checks every candidate when the sample is large enough", () => {
    expect(
      selectMerchants(roster, { sample: 20 })
        .checked.map((m) => m.id)
        .sort(),
    ).toEqual(["mer_a", "mer_b", "mer_c", "mer_e"]);
  });

  it("checks exactly --merchant, known or not, revoked or not", () => {
    expect(selectMerchants(roster, { only: "mer_d", sample: 1 }).checked).toEqual([roster[3]]);
    expect(selectMerchants(roster, { only: "mer_new", sample: 1 }).checked).toEqual([
      { id: "mer_new", configured: false, status: null, revoked: false, cursor: null },
    ]);
  });
});
