import { z } from "zod";
import { WebhookError } from "./webhook-error.ts";

const nonEmpty = z.string().min(1, "must be a non-empty string");

/** The event types the Loops spec names. Others are kept and stored as they came, just not named in metrics. */
export const KNOWN_EVENT_TYPES: ReadonlySet<string> = new Set([
  "order.status_changed",
  "connection.revoked",
  "job.completed",
  "business_profile.approved",
  "business_profile.rejected",
]);

/** Default longest `id`, `type`, `merchant_id`, `location_id`, `connection_id` (and string `data.order_id`). */
export const DEFAULT_MAX_ID_LENGTH = 255;
/** Default deepest nesting of arrays and objects in a webhook body. */
export const DEFAULT_MAX_JSON_DEPTH = 64;

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
  /**
   * Longest id-like field (`id`, `type`, `merchant_id`, `location_id`, `connection_id`, a string
   * `data.order_id`), in characters; longer ones are refused with 422 `unstorable_event`. These are indexed
   * in Postgres, whose index rows hold at most about 2.7 kB. Default: 255.
   */
  maxIdLength?: number;
  /** Deepest nesting of arrays and objects; deeper bodies get 422 `unstorable_event`. Default: 64. */
  maxJsonDepth?: number;
}

/**
 * How deeply arrays and objects nest in a JSON text, stopping as soon as `limit` is passed. Brackets inside
 * strings do not count. The text must be valid JSON (checked by JSON.parse first).
 */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > limit) return true;
    } else if (c === 93 || c === 125) depth--;
  }
  return false;
}

/** The first id-like field longer than `max` characters, or undefined. */
function overlongField(event: WebhookEvent, max: number): string | undefined {
  const fields: [string, unknown][] = [
    ["id", event.id],
    ["type", event.type],
    ["merchant_id", event.merchant_id],
    ["location_id", event.location_id],
    ["connection_id", event.connection_id],
    ["data.order_id", event.data["order_id"]],
  ];
  for (const [name, value] of fields) if (typeof value === "string" && value.length > max) return name;
  return undefined;
}

/**
 * Parses and validates a raw webhook body; throws WebhookError naming what is wrong: 400 for a
 * malformed event, 422 `unstorable_event` for a well-formed one past the bounds Postgres can store.
 */
export function parseEventEnvelope(
  body: Uint8Array | string,
  {
    expectedId,
    maxIdLength = DEFAULT_MAX_ID_LENGTH,
    maxJsonDepth = DEFAULT_MAX_JSON_DEPTH,
  }: ParseEventOptions = {},
): WebhookEvent {
  const text = typeof body === "string" ? body : Buffer.from(body).toString("utf8");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new WebhookError("invalid_json", "the body is not valid JSON", { cause: error });
  }
  const parsed = eventEnvelopeSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join(".") || "body"}: ${i.message}`)
      .join("; ");
    throw new WebhookError("invalid_envelope", `the event envelope is invalid (${problems})`);
  }
  if (expectedId !== undefined && parsed.data.id !== expectedId) {
    throw new WebhookError("id_mismatch", "the webhook-id header does not equal the body's id");
  }
  const overlong = overlongField(parsed.data, maxIdLength);
  if (overlong !== undefined) {
    throw new WebhookError(
      "unstorable_event",
      `${overlong} is longer than ${maxIdLength} characters, more than the inbox stores`,
      { reason: "field_too_long" },
    );
  }
  if (jsonDepthExceeds(text, maxJsonDepth)) {
    throw new WebhookError(
      "unstorable_event",
      `the body nests arrays and objects deeper than ${maxJsonDepth} levels, more than the inbox stores`,
      { reason: "json_too_deep" },
    );
  }
  return parsed.data;
}
