// Correctly signed, well-formed events (and ones Postgres cannot store), and concurrent bursts mixing them
// with forged requests, so bad and good events share the receiver's group-commit transactions.

import fc from "fast-check";
import {
  type HostileRequest,
  mutatedRequest,
  randomRequest,
  signedHostileRequest,
} from "./webhook-arbitraries.ts";

/** A correctly signed order event whose data is `data`, labelled `kind`. */
function signedOrderEvent(
  secret: string,
  data: Record<string, unknown>,
  kind: HostileRequest["kind"],
): HostileRequest {
  return signedHostileRequest(
    secret,
    {
      type: "order.status_changed",
      created_at: new Date().toISOString(),
      merchant_id: "mer_fuzz_1",
      location_id: "loc_fuzz_1",
      connection_id: "con_fuzz_1",
      origin: { type: "channel", application_id: null },
      data,
    },
    kind,
  );
}

/** One well-formed, correctly signed order event. */
export function plausibleSignedRequest(secret: string): HostileRequest {
  return signedOrderEvent(
    secret,
    { order_id: "ord_fuzz_1", channel_ref: "HS-1", status: "accepted", version: 2 },
    "plausible",
  );
}

/** A correctly signed event Postgres cannot store (a NUL character in a string): refused with a 4xx. */
export function poisonedSignedRequest(secret: string): HostileRequest {
  return signedOrderEvent(
    secret,
    { order_id: "ord_fuzz_2", channel_ref: "HS-\u0000-2", status: "accepted", version: 3 },
    "poisoned",
  );
}

/** Bursts sent at once, so they share group-commit transactions: good, poisoned and forged together. */
export function concurrentBurst(secret: string, wrongSecret: string): fc.Arbitrary<HostileRequest[]> {
  const one = fc.oneof(
    { weight: 4, arbitrary: fc.constant(null).map(() => plausibleSignedRequest(secret)) },
    { weight: 1, arbitrary: fc.constant(null).map(() => poisonedSignedRequest(secret)) },
    { weight: 1, arbitrary: mutatedRequest(secret, wrongSecret) },
    { weight: 1, arbitrary: randomRequest() },
  );
  return fc.array(one, { minLength: 5, maxLength: 40 });
}
