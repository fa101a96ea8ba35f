import type { Random } from "../random.ts";
import type { Order, OrderStatus } from "./resources.ts";

const FINAL: ReadonlySet<OrderStatus> = new Set(["delivered", "picked_up", "rejected", "cancelled"]);

/** Statuses from which no further move happens. A pickup order ends at picked_up; a delivery at delivered. */
export function isFinal(order: Pick<Order, "status" | "type">): boolean {
  if (order.status === "picked_up") return order.type !== "delivery";
  return FINAL.has(order.status);
}

/** The happy-path next status, or undefined when the order is finished. */
export function nextStatus(order: Pick<Order, "status" | "type">): OrderStatus | undefined {
  if (isFinal(order)) return undefined;
  switch (order.status) {
    case "placed":
      return "accepted";
    case "accepted":
      return "preparing";
    case "preparing":
      return "ready";
    case "ready":
      return order.type === "dine_in" ? "delivered" : "picked_up";
    case "picked_up":
      return "delivered";
    default:
      return undefined;
  }
}

/** The next status with the bad days mixed in: some placed orders rejected, a few cancelled on the way. */
export function nextStatusWithMishaps(
  order: Pick<Order, "status" | "type">,
  random: Random,
): OrderStatus | undefined {
  const next = nextStatus(order);
  if (!next) return undefined;
  if (order.status === "placed" && random.chance(0.05)) return "rejected";
  if ((order.status === "accepted" || order.status === "preparing") && random.chance(0.03))
    return "cancelled";
  return next;
}

/** Whether a move is allowed: forward along the lifecycle, or to rejected/cancelled before pickup. */
export function canMove(order: Pick<Order, "status" | "type">, to: OrderStatus): boolean {
  if (isFinal(order)) return false;
  if (to === "rejected") return order.status === "placed";
  if (to === "cancelled") return order.status !== "picked_up";
  let cursor: Pick<Order, "status" | "type"> = order;
  for (let step = nextStatus(cursor); step; step = nextStatus(cursor)) {
    if (step === to) return true;
    cursor = { status: step, type: order.type };
  }
  return false;
}
