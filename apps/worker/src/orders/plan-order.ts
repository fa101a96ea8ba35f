import { ORDER_STATUSES } from "@loops-sync/loops-client";
import type { StatusChain, StatusStep } from "@loops-sync/replica";
import type { Claimed, ClaimedEvent } from "./claim-orders.ts";

/**
 * How long a status event that leaves a version gap (v3 stored at v1) waits for the missing event before its
 * order is fetched instead. Webhooks reordered by concurrent delivery arrive tens of ms apart; a lost one is
 * retried by Loops only after 10 s, and catch-up finds it later still, so waiting longer than this buys
 * little and holds the order stale. docs/decisions.md, "Status from the event".
 */
export const REORDER_WAIT_MS = 1000;

/** The spec's order statuses: a payload naming another is not applied (the order is fetched instead). */
const STATUSES: ReadonlySet<string> = new Set(ORDER_STATUSES);

/** What a batch does with one claimed order the replica does not cover. */
export interface OrderPlan {
  /** Status events that chain onto the stored row: applied from their payloads, no call. */
  chain?: StatusChain;
  /**
   * The events the replica covers once the chain is applied (the chain's own and those it makes stale):
   * settled by the chain's commit, or, with no chain (only a gap to wait for), by the batch's settle step.
   */
  settles: string[];
  /** Events past a version gap, young enough to wait for it: put back until REORDER_WAIT_MS after first queued. */
  hold?: { events: ClaimedEvent[] };
  /** What the payloads cannot prove: fetch the order (the fetch covers every claimed event). */
  fetch: boolean;
}

function step(e: ClaimedEvent): StatusStep | undefined {
  if (e.type !== "order.status_changed" || e.version === null) return undefined;
  if (!e.previous_status || !e.status || !STATUSES.has(e.status) || !e.at) return undefined;
  if (Number.isNaN(Date.parse(e.at))) return undefined;
  return { eventId: e.id, version: e.version, previousStatus: e.previous_status, status: e.status, at: e.at };
}

/**
 * Decides, from the claimed events' payloads and the stored row, what to apply without a call, what to wait
 * for and what to fetch. A new order, an event without a version, a status that does not chain and any
 * other order event are fetched; a gap waits up to `reorderWaitMs`, the chaining steps before it applied.
 */
export function planOrder(c: Claimed, merchantId: string, reorderWaitMs = REORDER_WAIT_MS): OrderPlan {
  const fetch: OrderPlan = { settles: [], fetch: true };
  if (c.replica_version === null || c.replica_status === null) return fetch;
  if (c.events.length === 0 || c.events.some((e) => e.version === null)) return fetch;
  const stored = c.replica_version;
  const newer = c.events.filter((e) => e.version! > stored).sort((a, b) => a.version! - b.version!);
  const steps: StatusStep[] = [];
  let version = stored;
  let status = c.replica_status;
  let at = 0;
  for (; at < newer.length; at++) {
    const e = newer[at]!;
    // A second event of a version already applied (a redelivery under another id) is covered by it.
    if (e.version! <= version) continue;
    const s = step(e);
    if (!s || s.version !== version + 1 || s.previousStatus !== status) break;
    steps.push(s);
    version = s.version;
    status = s.status;
  }
  const rest = newer.slice(at).filter((e) => e.version! > version);
  const chain: StatusChain | undefined =
    steps.length > 0
      ? { orderId: c.order_id, merchantId, fromVersion: stored, fromStatus: c.replica_status, steps }
      : undefined;
  const settles = c.events.filter((e) => e.version! <= version).map((e) => e.id);
  if (rest.length === 0) return chain ? { chain, settles, fetch: false } : fetch;
  // A gap: every later event a status change, none yet past its wait.
  const gap = rest[0]!.version! > version + 1 && rest.every((e) => step(e) !== undefined);
  const waited = Math.max(...rest.map((e) => e.age_seconds)) * 1000;
  if (gap && waited < reorderWaitMs) {
    return { ...(chain ? { chain } : {}), settles, hold: { events: rest }, fetch: false };
  }
  return fetch;
}
