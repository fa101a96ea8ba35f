import type { WebhookDelivery } from "./read-webhook-delivery.ts";
import type { MerchantSyncStatus, SyncStatus } from "./sync-status.ts";

/** Which merchants a status answer lists: all, or one page of them. */
export interface MerchantPage {
  /** `lag`: most behind first (oldest pending event, then applied lag); `id`: by merchant id. Default `id`. */
  sort?: "id" | "lag";
  /** Rows per page. Default: every merchant. */
  limit?: number;
  /** Rows skipped. Default 0. */
  offset?: number;
}

/** How far behind a merchant is, for sorting: its oldest pending event's age (a quiet merchant is not late). */
export function merchantLag(m: MerchantSyncStatus): number {
  return m.lag.oldestPendingAgeSeconds ?? 0;
}

/**
 * One page of the merchants, sorted; `merchantsTotal` keeps the whole count. At 5,000 merchants the page
 * polls 100 rows, not the 4 MB of all of them.
 */
export function pageMerchants<S extends SyncStatus & { webhookDelivery?: WebhookDelivery }>(
  status: S,
  { sort = "id", limit, offset = 0 }: MerchantPage,
): S {
  const merchants =
    sort === "lag"
      ? [...status.merchants].sort(
          (a, b) =>
            merchantLag(b) - merchantLag(a) ||
            b.failedEvents - a.failedEvents ||
            (a.merchantId < b.merchantId ? -1 : 1),
        )
      : status.merchants;
  const end = limit === undefined ? undefined : offset + limit;
  const paged = {
    ...status,
    merchants: merchants.slice(offset, end),
    merchantsTotal: status.merchants.length,
  };
  if (status.webhookDelivery && limit !== undefined) {
    paged.webhookDelivery = {
      ...status.webhookDelivery,
      merchants: status.webhookDelivery.merchants.slice(0, limit),
    };
  }
  return paged;
}
