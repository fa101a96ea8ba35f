import { describe, expect, it } from "vitest";
import { jsonDepthExceeds, parseEventEnvelope } from "./event-envelope.ts";
import { WebhookError } from "./webhook-error.ts";

const envelope = {
  id: "evt_1",
  type: "order.status_changed",
  created_at: "2026-11-22T10:00:00.123Z",
  merchant_id: "mer_1",
  location_id: null,
  connection_id: "con_1",
  origin: { type: "channel", application_id: null },
  data: { order_id: "ord_1", version: 2 },
};

function failure(body: unknown, expectedId?: string): WebhookError {
  try {
    parseEventEnvelope(typeof body === "string" ? body : JSON.stringify(body), { expectedId });
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookError);
    return error as WebhookError;
  }
  throw new Error("expected the envelope to be refused");
}

describe("parseEventEnvelope", () => {
  it("keeps unknown fields, event types and origin types", () => {
    const event = parseEventEnvelope(
      Buffer.from(
        JSON.stringify({
          ...envelope,
          type: "brand.something_new",
          origin: { type: "robot", application_id: "app_1", extra: 1 },
          future_field: [1, 2],
        }),
      ),
      { expectedId: "evt_1" },
    );
    expect(event.type).toBe("brand.something_new");
    expect(event.origin).toEqual({ type: "robot", application_id: "app_1", extra: 1 });
    expect(event["future_field"]).toEqual([1, 2]);
  });

  it("accepts an absent location_id and origin.application_id, and offsets in created_at", () => {
    const { location_id: _l, ...rest } = envelope;
    const event = parseEventEnvelope(
      JSON.stringify({ ...rest, created_at: "2026-11-22T13:00:00+03:00", origin: { type: "api" } }),
    );
    expect(event.location_id).toBeUndefined();
    expect(event.origin.application_id).toBeUndefined();
  });

  it("refuses non-JSON, missing required fields and wrong types with a 400 naming the field", () => {
    expect(failure("not json").code).toBe("invalid_json");
    const { connection_id: _c, ...noConnection } = envelope;
    const missing = failure(noConnection);
    expect(missing.code).toBe("invalid_envelope");
    expect(missing.status).toBe(400);
    expect(missing.detail).toContain("connection_id");
    expect(failure({ ...envelope, data: [1] }).detail).toContain("data");
    expect(failure({ ...envelope, created_at: "yesterday" }).detail).toContain("created_at");
    expect(failure({ ...envelope, origin: { application_id: "x" } }).detail).toContain("origin.type");
    expect(failure([envelope]).code).toBe("invalid_envelope");
  });

  it("refuses a body whose id differs from the webhook-id", () => {
    const error = failure(envelope, "evt_2");
    expect(error.code).toBe("id_mismatch");
    expect(error.status).toBe(400);
  });
});

describe("bounds of what the inbox stores", () => {
  it("counts nesting outside strings only, escaped quotes included", () => {
    expect(jsonDepthExceeds('{"a":[[1]]}', 3)).toBe(false);
    expect(jsonDepthExceeds('{"a":[[[1]]]}', 3)).toBe(true);
    expect(jsonDepthExceeds(JSON.stringify({ a: "[[[[{{{{", b: 'q\\"[[[[' }), 1)).toBe(false);
    expect(jsonDepthExceeds(JSON.stringify([["\\"], [["x"]]]), 2)).toBe(true);
  });

  it("refuses overlong id-like fields and deep bodies with 422 unstorable_event, any prefix within bounds", () => {
    const parse = (body: unknown) => {
      try {
        parseEventEnvelope(JSON.stringify(body), { maxIdLength: 24, maxJsonDepth: 4 });
        return "accepted";
      } catch (error) {
        const e = error as WebhookError;
        return `${e.status} ${e.code} ${e.reason}`;
      }
    };
    expect(parse({ ...envelope, id: `zz9_${"1".repeat(20)}` })).toBe("accepted");
    for (const field of ["id", "type", "merchant_id", "location_id", "connection_id"]) {
      expect(parse({ ...envelope, [field]: "x".repeat(25) }), field).toBe(
        "422 unstorable_event field_too_long",
      );
    }
    expect(parse({ ...envelope, data: { order_id: "o".repeat(25) } })).toBe(
      "422 unstorable_event field_too_long",
    );
    expect(parse({ ...envelope, data: { a: [[[1]]] } })).toBe("422 unstorable_event json_too_deep");
    expect(parse({ ...envelope, data: { a: [[1]] } })).toBe("accepted");
  });
});
