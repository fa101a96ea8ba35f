import type { SandboxEvent } from "../domain/resources.ts";

/** One HTTP attempt of a delivery, as the admin API shows it. */
export interface DeliveryAttempt {
  attempt: number;
  /** Sandbox time the request left. */
  started_at: string;
  ended_at: string;
  status: number | null;
  error: string | null;
}

/** One event on its way to one endpoint, with every attempt so far. */
export interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  endpoint_id: string;
  status: "pending" | "delivered" | "failed" | "dropped";
  attempts: DeliveryAttempt[];
  next_attempt_at: string | null;
}

/** The portal's send-test-event: a `webhook.test` event that never enters the event log. */
export function testEvent(id: string, createdAt: string, merchantId: string): SandboxEvent {
  return {
    id,
    type: "webhook.test",
    created_at: createdAt,
    merchant_id: merchantId,
    location_id: null,
    connection_id: "con_test",
    origin: { type: "system", application_id: null },
    data: { message: "Test event from the Loops sandbox" },
  };
}
