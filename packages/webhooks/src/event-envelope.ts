import { z } from "zod";
import { WebhookVerificationError } from "./webhook-verification-error.ts";

const nonEmpty = z.string().min(1, "must be a non-empty string");

/**
 * The Loops event envelope (webhook body = GET /events item). Unknown fields, event types and origin
 * types are kept as they came: the replica records what upstream sent, and new types must never be fatal.
 */
export const eventEnvelopeSchema = z.looseObject({
  id: nonEmpty,
  type: nonEmpty,
  created_at: z.iso.datetime({ offset: true, error: "must be an ISO 8601 date-time" }),
  merchant_id: nonEmpty,
  location_id: z.string().nullish(),
  connection_id: nonEmpty,
  // application_id is nullable in the spec; an absent one is read as null rather than refusing the event.
  origin: z.looseObject({ type: nonEmpty, application_id: z.string().nullish() }),
  data: z.record(z.string(), z.unknown(), { error: "must be an object" }),
});

export type WebhookEvent = z.output<typeof eventEnvelopeSchema>;

export interface ParseEventOptions {
  /** The authenticated webhook-id; the body's `id` must equal it. */
  expectedId?: string;
}

/** Parses and validates a raw webhook body; throws WebhookVerificationError (400) naming what is wrong. */
export function parseEventEnvelope(
  body: Uint8Array | string,
  { expectedId }: ParseEventOptions = {},
): WebhookEvent {
  let json: unknown;
  try {
    json = JSON.parse(typeof body === "string" ? body : Buffer.from(body).toString("utf8"));
  } catch (error) {
    throw new WebhookVerificationError("invalid_json", "the body is not valid JSON", { cause: error });
  }
  const parsed = eventEnvelopeSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join(".") || "body"}: ${i.message}`)
      .join("; ");
    throw new WebhookVerificationError("invalid_envelope", `the event envelope is invalid (${problems})`);
  }
  if (expectedId !== undefined && parsed.data.id !== expectedId) {
    throw new WebhookVerificationError("id_mismatch", "the webhook-id header does not equal the body's id");
  }
  return parsed.data;
}
