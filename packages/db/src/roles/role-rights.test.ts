import { describe, expect, it } from "vitest";
import { rightsAfter } from "./role-rights.ts";

describe("rightsAfter", () => {
  it("adds on grant and never narrows", () => {
    expect(rightsAfter("none", "reader", false)).toBe("reader");
    expect(rightsAfter("none", "consumer", false)).toBe("consumer");
    expect(rightsAfter("reader", "consumer", false)).toBe("consumer");
    expect(rightsAfter("consumer", "reader", false)).toBe("consumer");
  });
  it("takes the level and everything above it on revoke", () => {
    expect(rightsAfter("consumer", "consumer", true)).toBe("reader");
    expect(rightsAfter("consumer", "reader", true)).toBe("none");
    expect(rightsAfter("reader", "reader", true)).toBe("none");
    expect(rightsAfter("reader", "consumer", true)).toBe("reader");
    expect(rightsAfter("none", "reader", true)).toBe("none");
  });
});
