import { describe, expect, it } from "vitest";
import { ProblemError } from "../problem.ts";
import { EventLog, matchesTypes } from "./event-log.ts";
import type { SandboxEvent } from "./resources.ts";

const event = (id: string, type: string, merchant: string, at: number): SandboxEvent => ({
  id,
  type,
  created_at: new Date(at).toISOString(),
  merchant_id: merchant,
  location_id: null,
  connection_id: "con_1",
  origin: { type: "system", application_id: null },
  data: {},
});

describe("matchesTypes", () => {
  it("matches exact names, prefix wildcards and everything", () => {
    expect(matchesTypes("order.created", ["order.*"])).toBe(true);
    expect(matchesTypes("order.created", ["order.status_changed"])).toBe(false);
    expect(matchesTypes("orders.x", ["order.*"])).toBe(false);
    expect(matchesTypes("job.completed", ["order.*", "job.completed"])).toBe(true);
    expect(matchesTypes("anything", ["*"])).toBe(true);
    expect(matchesTypes("anything", undefined)).toBe(true);
  });
});

describe("EventLog", () => {
  it("pages one merchant's events after an id, filtered by type, with has_more", () => {
    let now = 1_000_000;
    const log = new EventLog(() => now);
    const ids = ["evt_01", "evt_02", "evt_03", "evt_04", "evt_05"];
    for (const [i, id] of ids.entries()) {
      log.append(event(id, i % 2 ? "job.completed" : "order.created", i === 4 ? "mer_b" : "mer_a", now));
    }
    expect(log.page({ merchantId: "mer_a", limit: 2 })).toEqual({
      data: [expect.objectContaining({ id: "evt_01" }), expect.objectContaining({ id: "evt_02" })],
      has_more: true,
    });
    expect(log.page({ merchantId: "mer_a", after: "evt_02", limit: 2 }).data.map((e) => e.id)).toEqual([
      "evt_03",
      "evt_04",
    ]);
    expect(log.page({ merchantId: "mer_a", after: "evt_02", limit: 2 }).has_more).toBe(false);
    expect(log.page({ merchantId: "mer_a", types: ["order.*"], limit: 10 }).data.map((e) => e.id)).toEqual([
      "evt_01",
      "evt_03",
    ]);
    expect(() => log.page({ merchantId: "mer_a", after: "evt_05", limit: 1 })).toThrow(ProblemError);
    now += 30 * 24 * 3600_000 + 1;
    expect(log.all()).toEqual([]);
    expect(() => log.page({ after: "evt_01", limit: 1 })).toThrow(ProblemError);
  });
});
