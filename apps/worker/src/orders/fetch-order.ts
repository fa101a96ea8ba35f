import type { SyncMerchantApi } from "@loops-sync/loops-client";
import { invalidOrder } from "@loops-sync/replica";

/**
 * GET /orders/{id}, refusing an answer about another order: applying it would write that order under the
 * wrong events, so it is an `invalid_order` error (recorded as failed, not retried).
 */
export async function fetchOrder(
  api: SyncMerchantApi,
  orderId: string,
  signal: AbortSignal,
): Promise<unknown> {
  const order = await api.orders.get(orderId, { signal });
  const fetchedId = (order as { id?: unknown } | null)?.id;
  if (fetchedId !== orderId) {
    throw invalidOrder("id", `asked for ${orderId}, got ${JSON.stringify(fetchedId)}`, orderId);
  }
  return order;
}
