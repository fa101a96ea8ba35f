import { type ChangeInput, recordChanges, type Sql } from "@loops-sync/db";
import { expect } from "vitest";
import type { ForwardEndpoint, ForwardRequest } from "#testkit/forward-endpoint";

/**
 * Commits `perResource` changes for each of `resources` channels, `perTransaction` changes a transaction, the
 * resources interleaved (so one resource's changes are spread over many commits). Returns their positions.
 */
export async function writeChanges(
  sql: Sql,
  {
    resources,
    perResource,
    perTransaction = 10,
  }: { resources: number; perResource: number; perTransaction?: number },
): Promise<number[]> {
  const all: ChangeInput[] = [];
  for (let v = 1; v <= perResource; v++) {
    for (let r = 0; r < resources; r++) {
      all.push({
        resource: "channel",
        resourceId: `chn_${r}`,
        merchantId: null,
        operation: v === 1 ? "insert" : "update",
        version: v,
        previousVersion: v === 1 ? null : v - 1,
        source: "reconcile",
      });
    }
  }
  const [before] = await sql<
    { max: number }[]
  >`select coalesce(max(position), 0)::int8 as max from replica.changes`;
  for (let i = 0; i < all.length; i += perTransaction) {
    await sql.begin((tx) => recordChanges(tx, all.slice(i, i + perTransaction)));
  }
  const rows = await sql<{ position: number }[]>`
    select position from replica.changes where position > ${before!.max} order by position`;
  expect(rows).toHaveLength(all.length);
  return rows.map((r) => r.position);
}

/**
 * The endpoint's view of a run, checked: every position accepted, every request signed validly with
 * webhook-id chg_<position>, one resource's requests (or accepted ones) never going back in position, no change answered
 * twice at once. Returns the duplicate share (accepted requests beyond the first per change, over changes).
 */
export function expectEveryChangeDelivered(
  endpoint: ForwardEndpoint,
  positions: readonly number[],
  {
    order = "requests",
    timeoutMs,
  }: {
    /** Whose order is checked: every request, or only the accepted ones (dead changes sent again come late). */
    order?: "requests" | "accepted";
    /**
     * FORWARD_TIMEOUT_MS, when the endpoint may be too slow for it (a loaded machine): a change sent again while
     * the endpoint still answers an attempt it had held that long is a retry of an attempt its sender gave up on,
     * not two senders at once. Default: every overlap is a fault.
     */
    timeoutMs?: number;
  } = {},
): number {
  const accepted = endpoint.accepted();
  expect(new Set(accepted.map((r) => r.position))).toEqual(new Set(positions));
  for (const r of endpoint.requests) {
    expect(r.signatureValid, `signature of ${r.webhookId}`).toBe(true);
    expect(r.webhookId).toBe(`chg_${r.position}`);
  }
  const lastByResource = new Map<string, number>();
  for (const r of order === "requests" ? endpoint.requests : accepted) {
    const key = `${r.resource}/${r.resourceId}`;
    const last = lastByResource.get(key) ?? 0;
    expect(r.position, `${key}: chg_${r.position} sent after chg_${last}`).toBeGreaterThanOrEqual(last);
    lastByResource.set(key, r.position);
  }
  const givenUp = (r: ForwardRequest) =>
    timeoutMs !== undefined && r.overlappedSince !== null && r.receivedAt - r.overlappedSince >= timeoutMs;
  expect(
    endpoint.requests.filter((r) => r.overlapped && !givenUp(r)).map((r) => r.webhookId),
    "changes sent again while an attempt was being answered within the timeout",
  ).toEqual([]);
  return (accepted.length - positions.length) / positions.length;
}
