import { z } from "zod";
import type { CallOptions } from "../call-options.ts";
import { type Order, OrderSchema } from "../schemas/order.ts";
import { id } from "../validation/rules.ts";
import { validateInput } from "../validation/validate-input.ts";
import { ScopedResource } from "./scoped-resource.ts";

const SandboxOrderInput = z.strictObject({ location_id: id, channel: z.string().min(1).optional() });
export type SandboxOrderParams = z.input<typeof SandboxOrderInput>;

/** Sandbox-only operations. */
export class SandboxResource extends ScopedResource {
  /**
   * POST /sandbox/orders: a realistic test order that produces real order.* events. It takes no
   * Idempotency-Key, so it is never retried after a 5xx or a lost answer (that could make two).
   */
  async createOrder(params: SandboxOrderParams, options: CallOptions = {}): Promise<Order> {
    const json = validateInput(SandboxOrderInput, params);
    return this.send({
      method: "POST",
      route: "/sandbox/orders",
      path: "/sandbox/orders",
      json,
      schema: OrderSchema,
      signal: options.signal,
    });
  }
}
