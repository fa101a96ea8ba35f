import type { Logger } from "@loops-sync/config";
import { activeTracing } from "@loops-sync/tracing";
import {
  parseEventEnvelope,
  type UnstorableReason,
  WebhookError,
  type WebhookVerifier,
} from "@loops-sync/webhooks";
import type { Context } from "hono";
import type { EventStore } from "./event-store.ts";
import { problemResponse } from "./problem-response.ts";
import { readBody } from "./read-body.ts";
import type { ReceiverEnv } from "./receiver-env.ts";
import { ReceiverError } from "./receiver-error.ts";
import type { ReceiverMetrics } from "./receiver-metrics.ts";
import { type RequestTrace, traceWebhookRequest } from "./trace-webhook-request.ts";

export interface WebhookHandlerOptions {
  verifier: WebhookVerifier;
  store: EventStore;
  metrics: ReceiverMetrics;
  logger: Logger;
  maxBodyBytes: number;
  retryAfterSeconds: number;
  /** Longest id-like envelope field, in characters (see parseEventEnvelope). */
  maxIdLength?: number;
  /** Deepest nesting of arrays and objects in a body. */
  maxJsonDepth?: number;
}

const TITLES: Record<number, string> = {
  400: "Bad request",
  401: "Unauthorized",
  413: "Payload too large",
  415: "Unsupported media type",
  422: "Unprocessable event",
  503: "Service unavailable",
};

/** What a 503 tells the sender; the driver's error stays in the logs. */
const UNAVAILABLE_DETAIL: Record<string, string> = {
  database_unavailable: "the event was not stored: the database is unavailable; retry later",
  store_timeout: "the event was not stored in time; retry later",
};

function isJson(contentType: string | undefined): boolean {
  const media = (contentType ?? "").split(";", 1)[0]!.trim().toLowerCase();
  return media === "application/json";
}

/** POST /webhooks/loops: verify the raw bytes, validate the envelope, store durably, then acknowledge. */
export function createWebhookHandler({
  verifier,
  store,
  metrics,
  logger,
  maxBodyBytes,
  retryAfterSeconds,
  maxIdLength,
  maxJsonDepth,
}: WebhookHandlerOptions) {
  const refuse = (status: number, code: string, detail: string, headers?: Record<string, string>) => {
    metrics.rejected.inc({ reason: code });
    return problemResponse({ status, code, title: TITLES[status] ?? "Error", detail, headers });
  };
  const tooLarge = () =>
    // Closing the connection is what lets us skip the rest of the body instead of draining it.
    refuse(413, "payload_too_large", `the body exceeds ${maxBodyBytes} bytes`, { connection: "close" });
  // Logged by id and reason (and SQLSTATE), never with the payload or Postgres's message, which may quote it.
  const unstorable = (
    eventId: string,
    reason: UnstorableReason | undefined,
    detail: string,
    sqlstate?: string,
  ) => {
    metrics.unstorable.inc({ reason: reason ?? "data_exception" });
    const shown = eventId.length > 128 ? `${eventId.slice(0, 128)}… (${eventId.length} characters)` : eventId;
    logger.warn({ eventId: shown, reason, sqlstate }, "event refused: it can never be stored");
    return refuse(422, "unstorable_event", detail);
  };

  async function handle(c: Context<ReceiverEnv>, trace?: RequestTrace): Promise<Response> {
    // Node's own header object when served by @hono/node-server: no fetch Request is built for us.
    const headers = c.env?.incoming?.headers ?? c.req.raw.headers;
    const header = (name: string) =>
      headers instanceof Headers ? (headers.get(name) ?? undefined) : (headers[name] as string | undefined);
    if (!isJson(header("content-type"))) {
      return refuse(415, "unsupported_media_type", "send the event as Content-Type: application/json");
    }
    const declared = Number(header("content-length") ?? "0");
    if (declared > maxBodyBytes) return tooLarge();

    let body: Buffer;
    try {
      body = await readBody({ incoming: c.env?.incoming, request: c.req.raw, maxBytes: maxBodyBytes });
    } catch (error) {
      if (error instanceof ReceiverError && error.code === "payload_too_large") return tooLarge();
      return refuse(400, "body_unreadable", "the request body could not be read");
    }

    let event: ReturnType<typeof parseEventEnvelope>;
    // Decoded once: parsed here, and stored as it is (the event is not serialized again).
    let text: string;
    let eventId: string | undefined;
    try {
      eventId = verifier.verify({ headers, body }).id;
      text = body.toString("utf8");
      event = parseEventEnvelope(text, { expectedId: eventId, maxIdLength, maxJsonDepth });
    } catch (error) {
      if (error instanceof WebhookError) {
        if (error.code === "unstorable_event") return unstorable(eventId!, error.reason, error.detail);
        logger.debug({ code: error.code }, "webhook refused");
        return refuse(error.status, error.code, error.detail);
      }
      throw error;
    }

    trace?.span.setAttributes({
      "loops.event.id": event.id,
      "loops.event.type": event.type,
      "loops.merchant.id": event.merchant_id,
    });
    try {
      const outcome = await store.store(event, text, trace?.traceParent);
      metrics.received.inc({ type: metrics.typeLabel(event.type), outcome });
      if (outcome === "duplicate") metrics.duplicates.inc();
      return c.json({ id: event.id, status: outcome }, 200);
    } catch (error) {
      if (!(error instanceof ReceiverError)) throw error;
      if (error.code === "unstorable_event") {
        const sqlstate = (error.cause as { code?: string } | undefined)?.code;
        return unstorable(
          event.id,
          error.reason,
          `Postgres refuses this event's content (SQLSTATE ${sqlstate}); a retry cannot succeed`,
          sqlstate,
        );
      }
      // The message only: driver errors carry query parameters (whole payloads) we do not want in logs.
      logger.warn({ code: error.code, eventId: event.id }, error.message);
      return refuse(503, error.code, UNAVAILABLE_DETAIL[error.code]!, {
        "retry-after": String(retryAfterSeconds),
      });
    }
  }

  return async function webhookHandler(c: Context<ReceiverEnv>): Promise<Response> {
    const started = performance.now();
    metrics.inFlight.inc();
    let status = 500;
    try {
      const response = activeTracing()
        ? await traceWebhookRequest(c, (trace) => handle(c, trace))
        : await handle(c);
      status = response.status;
      return response;
    } finally {
      metrics.inFlight.dec();
      metrics.ackSeconds.observe({ status: String(status) }, (performance.now() - started) / 1000);
    }
  };
}
