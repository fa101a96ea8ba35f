import { LoopsError } from "@loops-sync/loops-client";
import { describe, expect, it } from "vitest";
import { checkOrder } from "./order-input.ts";

const valid = {
  id: "ord_1",
  version: 2,
  merchant_id: "mer_1",
  location_id: "loc_1",
  channel: "jahez",
  channel_ref: "J-1",
  type: "delivery",
  status: "a_status_from_the_future",
  created_at: "2026-11-22T10:00:00Z",
  updated_at: "2026-11-22T10:05:00Z",
  items: [
    { name: { en: "Kebab" }, quantity: 1, unit_price: { amount: 1500, currency: "SAR" }, modifiers: [] },
  ],
  totals: { subtotal: { amount: 1500, currency: "SAR" }, total: { amount: 1725, currency: "SAR" } },
  status_history: [{ status: "placed", at: "2026-11-22T10:00:00Z" }],
  unknown_field: { kept: true },
};

function fieldOf(input: unknown): string | undefined {
  try {
    checkOrder(input);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(LoopsError);
    return (error as LoopsError).field;
  }
}

describe("checkOrder", () => {
  it("accepts a spec-shaped order with unknown fields and an unknown status", () => {
    expect(checkOrder(valid)).toBe(valid);
  });

  it("names the string holding a NUL character, which Postgres cannot store", () => {
    expect(fieldOf({ ...valid, notes: "bad\u0000note" })).toBe("notes");
    expect(fieldOf({ ...valid, items: [{ ...valid.items[0], name: { en: "x", ar: "\u0000" } }] })).toBe(
      "items[0].name.ar",
    );
    expect(fieldOf({ ...valid, extensions: { "k\u0000": 1 } })).toBe("extensions.k\u0000");
    // A literal backslash-u-0000 (six characters) is no NUL: stored as it is.
    expect(() => checkOrder({ ...valid, notes: "C:\\u0000 is text" })).not.toThrow();
  });

  it("names the field that would break the replica", () => {
    expect(fieldOf(null)).toBe("body");
    expect(fieldOf({ ...valid, id: "" })).toBe("id");
    expect(fieldOf({ ...valid, version: -3 })).toBe("version");
    expect(fieldOf({ ...valid, version: 1.5 })).toBe("version");
    expect(fieldOf({ ...valid, location_id: undefined })).toBe("location_id");
    expect(fieldOf({ ...valid, updated_at: "yesterday" })).toBe("updated_at");
    const totals = { ...valid.totals, total: { amount: "17.25", currency: "SAR" } };
    expect(fieldOf({ ...valid, totals })).toBe("totals.total.amount");
    const item = { ...valid.items[0], unit_price: { amount: 1, currency: "" } };
    expect(fieldOf({ ...valid, items: [item] })).toBe("items[0].unit_price.currency");
    expect(fieldOf({ ...valid, status_history: [{ status: "placed" }] })).toBe("status_history[0].at");
  });

  it("holds catch-up to the spec's required fields, as the worker's fetch always was", () => {
    expect(fieldOf({ ...valid, channel_ref: undefined })).toBe("channel_ref");
    expect(fieldOf({ ...valid, items: undefined })).toBe("items");
  });

  it("says which order and what was wrong, in one line", () => {
    expect(() => checkOrder({ ...valid, version: -1 })).toThrow(
      "upstream order ord_1 has an invalid version: expected a non-negative integer, got -1",
    );
  });
});
