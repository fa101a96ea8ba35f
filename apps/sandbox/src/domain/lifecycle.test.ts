import { describe, expect, it } from "vitest";
import { createRandom } from "../random.ts";
import { canMove, isFinal, nextStatus, nextStatusWithMishaps } from "./lifecycle.ts";
import type { OrderStatus, OrderType } from "./resources.ts";

const walk = (type: OrderType): OrderStatus[] => {
  const path: OrderStatus[] = ["placed"];
  for (let s = nextStatus({ status: "placed", type }); s; s = nextStatus({ status: s, type })) path.push(s);
  return path;
};

describe("order lifecycle", () => {
  it("follows the happy path per order type", () => {
    expect(walk("delivery")).toEqual(["placed", "accepted", "preparing", "ready", "picked_up", "delivered"]);
    expect(walk("pickup")).toEqual(["placed", "accepted", "preparing", "ready", "picked_up"]);
    expect(walk("dine_in")).toEqual(["placed", "accepted", "preparing", "ready", "delivered"]);
  });

  it("allows rejection only when placed, cancellation before pickup, and nothing after the end", () => {
    expect(canMove({ status: "placed", type: "delivery" }, "rejected")).toBe(true);
    expect(canMove({ status: "accepted", type: "delivery" }, "rejected")).toBe(false);
    expect(canMove({ status: "ready", type: "delivery" }, "cancelled")).toBe(true);
    expect(canMove({ status: "picked_up", type: "delivery" }, "cancelled")).toBe(false);
    expect(canMove({ status: "accepted", type: "delivery" }, "placed")).toBe(false);
    expect(canMove({ status: "placed", type: "delivery" }, "ready")).toBe(true);
    expect(isFinal({ status: "cancelled", type: "pickup" })).toBe(true);
    expect(canMove({ status: "delivered", type: "delivery" }, "cancelled")).toBe(false);
  });

  it("mixes in some rejections and cancellations", () => {
    const random = createRandom(1);
    let rejected = 0;
    for (let i = 0; i < 2000; i++)
      if (nextStatusWithMishaps({ status: "placed", type: "delivery" }, random) === "rejected") rejected++;
    expect(rejected / 2000).toBeGreaterThan(0.03);
    expect(rejected / 2000).toBeLessThan(0.07);
  });
});
