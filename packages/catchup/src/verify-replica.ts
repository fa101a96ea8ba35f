import type { Logger } from "@loops-sync/config";
import type { Sql } from "@loops-sync/db";
import type { Order, SyncApi, SyncMerchantApi } from "@loops-sync/loops-client";
import {
  classifyUpstreamFailure,
  readMerchantState,
  revokeMerchantAndRecord,
  STALE_REFUSAL,
} from "@loops-sync/replica";
import { type Database, kyselyOver } from "@loops-sync/schema";
import { describeError } from "./catchup-error.ts";
import { compareOrder, type OrderDifference, type OrderState } from "./compare-order.ts";
import { listActiveMerchants } from "./list-active-merchants.ts";
import { repairOrder } from "./repair-order.ts";

export interface VerifyReplicaOptions {
  sql: Sql;
  client: SyncApi;
  /** Only this merchant. Default: every active merchant. */
  merchantId?: string | undefined;
  /** Configured merchants (LOOPS_MERCHANT_IDS). Default: []. */
  merchantIds?: readonly string[];
  /** Fix each difference with the upstream copy. Default: false (list only). */
  repair?: boolean;
  /** Orders per page (1–100). Default: 100. */
  pageSize?: number;
  /** Called after each list page. Default: none. */
  onProgress?: (progress: { merchantId: string; ordersChecked: number }) => void;
  /** Default: none. */
  signal?: AbortSignal;
  /** Default: none. */
  logger?: Logger;
}

export interface MerchantVerifyResult {
  merchantId: string;
  ordersUpstream: number;
  differences: OrderDifference[];
  /** Differences fixed by --repair. */
  repaired: number;
  /** Set when the merchant could not be verified (revoked, unreachable). */
  error: string | undefined;
  /** Not verified because Loops refused the application (`refused`, see classifyUpstreamFailure). */
  refused: boolean;
  /**
   * Rows applied from an event's payload and not yet confirmed by a fetch (`fetched_version < version`),
   * counted apart from the differences: they are no drift, and the worker confirms them by itself.
   */
  unconfirmed: number;
}

export interface VerifyResult {
  merchants: MerchantVerifyResult[];
  differences: OrderDifference[];
  repaired: number;
  /** Differences still there (all of them without repair), plus merchants that could not be verified. */
  remaining: number;
  /** Unconfirmed rows of every merchant verified (not in `remaining`). */
  unconfirmed: number;
}

/**
 * Compares replica.orders with the upstream order list (id, version, status), merchant by merchant. Each
 * list page is compared with the replica rows of its ids as it arrives; replica orders the list never
 * showed are asked for one by one (they may have been created while we paged) and count as extra only on 404.
 */
export async function verifyReplica({
  sql,
  client,
  merchantId,
  merchantIds = [],
  repair = false,
  pageSize = 100,
  onProgress,
  signal,
  logger,
}: VerifyReplicaOptions): Promise<VerifyResult> {
  const merchants = merchantId ? [merchantId] : await listActiveMerchants(sql, merchantIds);
  const results: MerchantVerifyResult[] = [];
  for (const id of merchants) {
    const result: MerchantVerifyResult = {
      merchantId: id,
      ordersUpstream: 0,
      differences: [],
      repaired: 0,
      error: undefined,
      refused: false,
      unconfirmed: 0,
    };
    results.push(result);
    const state = await readMerchantState(sql, id);
    if (state.status === "revoked") {
      result.error = "merchant is revoked: no calls are made for it";
      continue;
    }
    try {
      const copies = await compareMerchant(
        sql,
        client.forMerchant(id),
        id,
        pageSize,
        result,
        signal,
        onProgress,
      );
      if (repair) {
        for (const d of result.differences) {
          if (await repairOrder(sql, d, copies.get(d.orderId))) result.repaired++;
        }
      }
    } catch (error) {
      if (signal?.aborted) throw error;
      const failure = classifyUpstreamFailure(error);
      // Refused under a connection the merchant has left since: only that one is revoked (STALE_REFUSAL).
      const stale =
        failure.kind === "revoked" &&
        (await revokeMerchantAndRecord(sql, id, { source: "repair", refusedUnder: state.connectionId }));
      result.error = stale
        ? STALE_REFUSAL
        : failure.kind === "revoked"
          ? "merchant revoked the connection"
          : describeError(error);
      result.refused = failure.refused === true;
      logger?.warn({ merchantId: id, error: result.error }, "verify: merchant not verified");
    }
  }
  const differences = results.flatMap((r) => r.differences);
  const repaired = results.reduce((n, r) => n + r.repaired, 0);
  const unverified = results.filter((r) => r.error !== undefined).length;
  const unconfirmed = results.reduce((n, r) => n + r.unconfirmed, 0);
  return {
    merchants: results,
    differences,
    repaired,
    remaining: differences.length - repaired + unverified,
    unconfirmed,
  };
}

async function compareMerchant(
  sql: Sql,
  api: SyncMerchantApi,
  merchantId: string,
  pageSize: number,
  result: MerchantVerifyResult,
  signal: AbortSignal | undefined,
  onProgress: VerifyReplicaOptions["onProgress"],
): Promise<Map<string, Order>> {
  const copies = new Map<string, Order>();
  const seen = new Set<string>();
  const callOptions = signal ? { signal } : {};
  const check = async (orders: readonly Order[]) => {
    const replica = await readReplicaStates(
      sql,
      orders.map((o) => o.id),
    );
    for (const order of orders) {
      seen.add(order.id);
      const d = compareOrder(merchantId, order.id, stateOf(order), replica.get(order.id) ?? null);
      if (d) {
        result.differences.push(d);
        copies.set(order.id, order);
      }
    }
  };
  let cursor: string | undefined;
  for (;;) {
    signal?.throwIfAborted();
    const page = await api.orders.list({ limit: pageSize, ...(cursor ? { cursor } : {}) }, callOptions);
    await check(page.data);
    result.ordersUpstream += page.data.length;
    onProgress?.({ merchantId, ordersChecked: result.ordersUpstream });
    if (!page.next_cursor || page.next_cursor === cursor) break;
    cursor = page.next_cursor;
  }
  const rows = await kyselyOver<Database>(sql)
    .selectFrom("replica.orders")
    .select(["id", "version", "status"])
    .where("merchant_id", "=", merchantId)
    .execute();
  for (const row of rows) {
    if (seen.has(row.id)) continue;
    try {
      await check([await api.orders.get(row.id, callOptions)]);
    } catch (error) {
      const failure = classifyUpstreamFailure(error);
      if (!(failure.kind === "permanent" && failure.status === 404)) throw error;
      result.differences.push({
        merchantId,
        orderId: row.id,
        kind: "extra",
        replica: { version: row.version, status: row.status },
        upstream: null,
      });
    }
  }
  const [unconfirmed] = await sql<{ n: number }[]>`
    select count(*)::int as n from replica.orders
    where merchant_id = ${merchantId} and unconfirmed_since is not null`;
  result.unconfirmed = unconfirmed?.n ?? 0;
  return copies;
}

const stateOf = (order: Order): OrderState => ({ version: order.version, status: order.status });

async function readReplicaStates(sql: Sql, ids: string[]): Promise<Map<string, OrderState>> {
  if (ids.length === 0) return new Map();
  const rows = await kyselyOver<Database>(sql)
    .selectFrom("replica.orders")
    .select(["id", "version", "status"])
    .where("id", "=", (eb) => eb.fn.any(eb.val(ids)))
    .execute();
  return new Map(rows.map((r) => [r.id, { version: r.version, status: r.status }]));
}
