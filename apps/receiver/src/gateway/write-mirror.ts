import type { WriteKind } from "./gateway-routes.ts";

/** A write Loops accepted (2xx), for the mirror: what it returned and whom it concerned. */
export interface AcceptedWrite {
  kind: WriteKind;
  /** The request's Service-Merchant-Id (absent for POST /merchants: the merchant is the answer). */
  merchantId: string | undefined;
  /** Loops' answer, parsed: the resource as it is now. */
  resource: unknown;
}

/**
 * Applies an accepted write to the mirror before the gateway answers (the worker's appliers, gated as the
 * reconcile gates them, with the feed's `write` change); resolves once committed. Returns whether anything
 * of the answer was mirrored (a business document, for one, is not).
 */
export type WriteMirror = (write: AcceptedWrite) => Promise<boolean>;
