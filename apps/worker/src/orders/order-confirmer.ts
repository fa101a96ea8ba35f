import { pauseMerchant } from "@loops-sync/db";
import { classifyUpstreamFailure } from "@loops-sync/replica";
import type { WorkerContext } from "../worker-context.ts";
import { applyConfirmingPage } from "./apply-confirming-page.ts";

/** Default of CONFIRM_WITHIN_SECONDS: a row applied from an event's payload is confirmed by a fetch within it. */
export const DEFAULT_CONFIRM_WITHIN_SECONDS = 300;
/**
 * A merchant whose last payload apply is this old has gone quiet: its unconfirmed rows are confirmed now,
 * one list page for all of them, rather than when the oldest reaches half of CONFIRM_WITHIN_SECONDS.
 */
export const CONFIRM_QUIET_SECONDS = 5;
/** List pages one confirmation reads at most (100 orders each); rows left wait for the next tick. */
const CONFIRM_MAX_PAGES = 5;
/** Merchants confirmed at once: their calls wait behind every live fetch in the budget anyway. */
const CONFIRM_CONCURRENCY = 4;

export interface OrderConfirmerOptions {
  /** CONFIRM_WITHIN_SECONDS. Default: {@link DEFAULT_CONFIRM_WITHIN_SECONDS}. */
  withinSeconds?: number;
  /** How often it looks for merchants due. Default: 1000 ms. */
  tickMs?: number;
}

export interface OrderConfirmer {
  /** Confirms every merchant due now; resolves with the merchants confirmed (for tests and the CLI). */
  confirmDue(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Confirms rows applied from an event's payload (`fetched_version < version`, migration 0019) with
 * `GET /orders?updated_since=` pages, one merchant at a time: every unconfirmed row of the merchant was
 * changed upstream at or after its oldest `updated_at`, so one page (newest first, up to 100 orders) usually
 * covers them all. The page goes through the version gate: a row at the same version is confirmed (a change in
 * the feed, source `confirm`, only if what a reader sees differs), a newer one applied. Calls go at the
 * `confirm` priority: after every live fetch, before catch-up, reconcile, backfill and verify. A merchant is
 * due when its oldest unconfirmed row has waited half of `withinSeconds`, or it has been quiet for
 * CONFIRM_QUIET_SECONDS; rows still unconfirmed after a page (moved while it was read) wait for the next tick.
 */
export function startOrderConfirmer(
  ctx: Pick<WorkerContext, "sql" | "client" | "logger">,
  { withinSeconds = DEFAULT_CONFIRM_WITHIN_SECONDS, tickMs = 1000 }: OrderConfirmerOptions = {},
): OrderConfirmer {
  if (!Number.isInteger(withinSeconds) || withinSeconds < 1) {
    throw new RangeError(`withinSeconds: expected a whole number above 0, got ${withinSeconds}`);
  }
  const { sql, client, logger } = ctx;
  const abort = new AbortController();
  const busy = new Set<string>();

  async function dueMerchants(): Promise<{ merchant_id: string; since: Date }[]> {
    return await sql<{ merchant_id: string; since: Date }[]>`
      select o.merchant_id, min(o.updated_at) as since from replica.orders o
      join sync.merchants m on m.id = o.merchant_id
      where o.unconfirmed_since is not null and m.status = 'active' and sync.paused_until(o.merchant_id) is null
      group by o.merchant_id
      having min(o.unconfirmed_since) <= now() - make_interval(secs => ${withinSeconds / 2})
          or max(o.synced_at) <= now() - make_interval(secs => ${CONFIRM_QUIET_SECONDS})
      order by min(o.unconfirmed_since)`;
  }

  async function confirmMerchant(merchantId: string, since: Date): Promise<void> {
    const api = client.forMerchant(merchantId, { priority: "confirm" });
    // A second's margin: upstream's updated_at is the change's time, which the event's created_at names.
    const updatedSince = new Date(since.getTime() - 1000).toISOString();
    let cursor: string | undefined;
    for (let page = 0; page < CONFIRM_MAX_PAGES; page++) {
      const listed = await api.orders.list(
        { updated_since: updatedSince, limit: 100, ...(cursor ? { cursor } : {}) },
        { signal: abort.signal },
      );
      const left = await applyConfirmingPage(sql, merchantId, listed.data);
      for (const bad of listed.rejected) {
        logger.warn({ merchantId, orderId: bad.id, reason: bad.error }, "order from the list not stored");
      }
      if (left === 0 || !listed.next_cursor) return;
      cursor = listed.next_cursor;
    }
  }

  async function confirmDue(): Promise<number> {
    const due = (await dueMerchants()).filter((m) => !busy.has(m.merchant_id));
    let confirmed = 0;
    const queue = [...due];
    const lane = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        if (abort.signal.aborted) return;
        busy.add(next.merchant_id);
        try {
          await confirmMerchant(next.merchant_id, next.since);
          confirmed++;
        } catch (error) {
          if (abort.signal.aborted) return;
          const failure = classifyUpstreamFailure(error);
          if (failure.kind === "rate_limited") {
            await pauseMerchant(sql, next.merchant_id, failure.retryAfterSeconds).catch(() => {});
          }
          logger.warn(
            { merchantId: next.merchant_id, error: String(error) },
            "confirming orders applied from events failed; tried again on a later tick",
          );
        } finally {
          busy.delete(next.merchant_id);
        }
      }
    };
    await Promise.all(Array.from({ length: CONFIRM_CONCURRENCY }, lane));
    return confirmed;
  }

  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    // One tick at a time: a slow one (its calls wait behind live fetches) is not joined by the next.
    running ??= confirmDue()
      .catch((error: unknown) =>
        logger.warn({ error: String(error) }, "order confirmer could not read its due merchants"),
      )
      .finally(() => {
        running = undefined;
      });
  }, tickMs);
  timer.unref();

  return {
    confirmDue,
    async stop() {
      clearInterval(timer);
      abort.abort();
      await running;
    },
  };
}
