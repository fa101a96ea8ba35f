import { describe, expect, it } from "vitest";
import { parseLanes } from "./orderRefresher.ts";

describe("parseLanes", () => {
  it("reads the lanes a NOTIFY names", () => {
    expect(parseLanes('[["mer_1",3],["mer_2",0]]')).toEqual([
      ["mer_1", 3],
      ["mer_2", 0],
    ]);
  });

  it("answers undefined (read the queue) for an empty or foreign payload", () => {
    for (const payload of ["", "[]", "not json", '{"a":1}', '[["mer_1"]]', '[["mer_1","3"]]', "[[1,2]]"])
      expect(parseLanes(payload)).toBeUndefined();
  });
});
