import { describe, expect, it } from "vitest";
import { parseMerchants } from "./order-scheduler.ts";

describe("parseMerchants", () => {
  it("reads the merchants a NOTIFY names", () => {
    expect(parseMerchants('["mer_1","mer_2"]')).toEqual(["mer_1", "mer_2"]);
  });

  it("answers undefined (read the queue) for an empty or foreign payload", () => {
    for (const payload of ["", "[]", "not json", '{"a":1}', '["mer_1",3]', '[""]', '[["mer_1",3]]'])
      expect(parseMerchants(payload)).toBeUndefined();
  });
});
