// fast-check arbitraries of hostile webhook requests: random and mutated bodies, ids, timestamps, signatures
// and content types. Each generated request says whether it is correctly signed, so the suite can check
// that only those ever reach the inbox.

import { randomBytes } from "node:crypto";
import { signWebhook } from "@loops-sync/webhooks";
import fc from "fast-check";

export interface HostileRequest {
  headers: Record<string, string>;
  body: Uint8Array;
  /** Signed with the receiver's secret, fresh timestamp, webhook-id equal to the body's id, unmutated. */
  correctlySigned: boolean;
  /** The event id when correctlySigned. */
  id?: string;
  kind: string;
}

const printable = (max: number) =>
  fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    maxLength: max,
  });

/** Mostly the plausible value, so most signed envelopes get past validation and reach the database. */
const mostly = <T>(plausible: T, ...others: fc.Arbitrary<unknown>[]) =>
  fc.oneof(
    { arbitrary: fc.constant(plausible) as fc.Arbitrary<unknown>, weight: 3 * others.length },
    ...others,
  );

let counter = 0;
/** A new event id, unique in this process. */
export const freshId = () => `evt_fuzz_${process.pid}_${++counter}_${randomBytes(3).toString("hex")}`;

/** A plausible envelope whose fields fast-check may replace with anything. */
const envelope = fc.record({
  type: fc.oneof(
    {
      arbitrary: fc.constantFrom(
        "order.created",
        "order.status_changed",
        "job.completed",
        "connection.revoked",
      ),
      weight: 6,
    },
    fc.string(),
    fc.anything(),
  ),
  created_at: mostly(new Date().toISOString(), fc.string(), fc.integer(), fc.constant(null)),
  merchant_id: mostly("mer_fuzz_1", fc.string({ maxLength: 300 }), fc.anything()),
  location_id: mostly("loc_fuzz_1", fc.constant(null), fc.string()),
  connection_id: mostly("con_fuzz_1", fc.string()),
  origin: mostly(
    { type: "channel", application_id: null },
    fc.record({ type: fc.string(), application_id: fc.oneof(fc.string(), fc.constant(null)) }),
    fc.anything(),
  ),
  data: fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({
        order_id: mostly("ord_fuzz_1", fc.string(), fc.constant("'; drop table sync.events; --")),
        version: fc.oneof(
          { arbitrary: fc.integer({ min: 1, max: 10 }), weight: 4 },
          fc.integer({ min: -5, max: 0 }),
          fc.double(),
          fc.string(),
          fc.constant(2 ** 80),
        ),
        status: mostly("accepted", fc.string()),
        channel_ref: mostly("مرحبا \u202Eabc\u202C", fc.string()),
      }),
    },
    fc.anything(),
  ),
  extra: fc.option(fc.jsonValue(), { nil: undefined }),
});

export const encode = (s: string) => new TextEncoder().encode(s);

/** `envelope` with a fresh id, signed with `secret`, as a request labelled `kind`. */
export function signedHostileRequest(
  secret: string,
  envelope: Record<string, unknown>,
  kind: HostileRequest["kind"],
): HostileRequest {
  const id = freshId();
  const text = JSON.stringify({ id, ...envelope });
  const headers = signWebhook({
    id,
    timestamp: Math.floor(Date.now() / 1000),
    body: text,
    secrets: [secret],
  });
  return {
    headers: { "content-type": "application/json", ...headers },
    body: encode(text),
    correctlySigned: true,
    id,
    kind,
  };
}

/** Correctly signed requests with arbitrary envelopes: stored or refused with a 4xx, never a 5xx. */
export function signedRequest(secret: string): fc.Arbitrary<HostileRequest> {
  return envelope.map((e) => signedHostileRequest(secret, e, "signed"));
}

type Mutation = (r: { headers: Record<string, string>; body: Uint8Array }) => void;

/** A correctly signed request, then one thing broken: none of these may be stored. */
export function mutatedRequest(secret: string, wrongSecret: string): fc.Arbitrary<HostileRequest> {
  const mutation: fc.Arbitrary<[string, Mutation]> = fc.oneof(
    fc.nat().map((n): [string, Mutation] => [
      "flip-body-byte",
      (r) => {
        const i = n % Math.max(1, r.body.length);
        r.body[i] = (r.body[i] ?? 0) ^ 0x01;
      },
    ]),
    printable(80).map((id): [string, Mutation] => [
      "other-id-header",
      (r) => {
        r.headers["webhook-id"] = `${id}x`;
      },
    ]),
    fc
      .oneof(fc.integer({ min: 301, max: 10 ** 9 }), fc.integer({ min: -(10 ** 9), max: -301 }))
      .map((shift): [string, Mutation] => [
        "timestamp-out-of-tolerance",
        (r) => {
          r.headers["webhook-timestamp"] = String(Math.floor(Date.now() / 1000) + shift);
        },
      ]),
    printable(40).map((ts): [string, Mutation] => [
      "garbage-timestamp",
      (r) => {
        r.headers["webhook-timestamp"] = `x${ts}`;
      },
    ]),
    fc.constant<[string, Mutation]>(["wrong-secret", () => {}]),
    printable(200).map((sig): [string, Mutation] => [
      "garbage-signature",
      (r) => {
        r.headers["webhook-signature"] = sig;
      },
    ]),
    fc.constant<[string, Mutation]>([
      "v2-prefix",
      (r) => {
        r.headers["webhook-signature"] = (r.headers["webhook-signature"] ?? "").replace("v1,", "v2,");
      },
    ]),
    fc.constant<[string, Mutation]>([
      "no-signature",
      (r) => {
        delete r.headers["webhook-signature"];
      },
    ]),
    fc.constant<[string, Mutation]>([
      "truncated-signature",
      (r) => {
        r.headers["webhook-signature"] = (r.headers["webhook-signature"] ?? "").slice(0, -4);
      },
    ]),
  );
  return fc.tuple(signedRequest(secret), mutation).map(([signed, [name, mutate]]) => {
    const r = { headers: { ...signed.headers }, body: Uint8Array.from(signed.body) };
    if (name === "wrong-secret") {
      const text = new TextDecoder().decode(r.body);
      Object.assign(
        r.headers,
        signWebhook({
          id: signed.id!,
          timestamp: Math.floor(Date.now() / 1000),
          body: text,
          secrets: [wrongSecret],
        }),
      );
    }
    mutate(r);
    return { ...r, correctlySigned: false, kind: `mutated:${name}` };
  });
}

/** Requests made of random parts: junk bodies, headers, content types, oversize and binary bodies. */
export function randomRequest(): fc.Arbitrary<HostileRequest> {
  const body = fc.oneof(
    fc.string().map(encode),
    fc.uint8Array({ maxLength: 2048 }),
    fc.jsonValue().map((v) => encode(JSON.stringify(v) ?? "null")),
    fc.constantFrom("", "null", "[]", "{", '{"id":', "\u0000", "{}".repeat(10_000)).map(encode),
    fc.nat({ max: 400_000 }).map((n) => encode(`{"id":"evt_big","pad":"${"a".repeat(n)}"}`)),
    fc.nat({ max: 5_000 }).map((n) => encode(`${"[".repeat(n)}${"]".repeat(n)}`)),
  );
  const header = fc.oneof(
    { weight: 8, arbitrary: printable(100) },
    fc.constant(""),
    fc.constant("v1,AAAA v1,BBBB"),
    // Past Node's 16 KiB header limit: the server itself answers 431.
    fc.nat({ max: 40_000 }).map((n) => "v".repeat(n)),
  );
  return fc
    .record({
      body,
      id: fc.option(header, { nil: undefined }),
      ts: fc.option(fc.oneof(header, fc.integer().map(String)), { nil: undefined }),
      sig: fc.option(header, { nil: undefined }),
      contentType: fc.option(fc.constantFrom("application/json", "text/plain", "multipart/form-data", "x"), {
        nil: undefined,
      }),
    })
    .map(({ body: b, id, ts, sig, contentType }) => {
      const headers: Record<string, string> = {};
      if (id !== undefined) headers["webhook-id"] = id;
      if (ts !== undefined) headers["webhook-timestamp"] = ts;
      if (sig !== undefined) headers["webhook-signature"] = sig;
      if (contentType !== undefined) headers["content-type"] = contentType;
      return { headers, body: b, correctlySigned: false, kind: "random" };
    });
}
