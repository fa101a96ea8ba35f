/** An order as far as verify compares it. */
export interface OrderState {
  version: number;
  status: string;
}

export type DifferenceKind =
  /** Upstream has it, the replica does not. */
  | "missing"
  /** The replica has it, upstream does not (confirmed by GET /orders/{id} answering 404). */
  | "extra"
  /** The replica holds an older version. */
  | "older"
  /** Same version, different status: the replica row was changed outside the version gate. */
  | "status_mismatch";

export interface OrderDifference {
  merchantId: string;
  orderId: string;
  kind: DifferenceKind;
  replica: OrderState | null;
  upstream: OrderState | null;
}

/**
 * How one order differs, or undefined when the replica is right. A replica newer than the upstream copy is
 * not a difference: the list was read before that update, and the version gate made the replica newer.
 */
export function compareOrder(
  merchantId: string,
  orderId: string,
  upstream: OrderState | null,
  replica: OrderState | null,
): OrderDifference | undefined {
  const diff = (kind: DifferenceKind): OrderDifference => ({ merchantId, orderId, kind, replica, upstream });
  if (!upstream && !replica) return undefined;
  if (!replica) return diff("missing");
  if (!upstream) return diff("extra");
  if (replica.version < upstream.version) return diff("older");
  if (replica.version === upstream.version && replica.status !== upstream.status)
    return diff("status_mismatch");
  return undefined;
}

/** One line per difference, for the operator. */
export function describeDifference(d: OrderDifference): string {
  const show = (s: OrderState | null) => (s ? `v${s.version} ${s.status}` : "absent");
  return `${d.merchantId} ${d.orderId} ${d.kind}: replica ${show(d.replica)}, upstream ${show(d.upstream)}`;
}
