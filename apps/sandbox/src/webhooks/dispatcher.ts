import type { SandboxClock } from "../clock.ts";
import { matchesTypes } from "../domain/event-log.ts";
import type { SandboxEvent } from "../domain/resources.ts";
import type { FaultInjector } from "../faults.ts";
import type { IdFactory } from "../ids.ts";
import type { SandboxStats } from "../stats.ts";
import { type Delivery, type DeliveryAttempt, testEvent } from "./delivery.ts";
import { WebhookEndpoints } from "./endpoint-registry.ts";
import type { WebhookEndpoint } from "./endpoints.ts";
import { createWebhookAgents, postWebhook } from "./post-webhook.ts";
import { DEFAULT_REPLY_TIMEOUT_MS, RETRY_SCHEDULE_MS } from "./retry-schedule.ts";

export interface WebhookDispatcherOptions {
  clock: SandboxClock;
  ids: IdFactory;
  faults: FaultInjector;
  stats: SandboxStats;
  /** The envelope an application receives for an event, or undefined when it must not see it. */
  envelopeFor: (event: SandboxEvent, applicationId: string) => SandboxEvent | undefined;
  defaultApplicationId: string;
  /** Real ms an endpoint has to answer. Default: 10 000. */
  replyTimeoutMs?: number;
  /** Requests in flight at once across endpoints; more wait their turn. Default: 64. */
  maxInFlight?: number;
  /** Deliveries kept for the admin API. Default: 5 000. */
  keepDeliveries?: number;
}

interface Pending {
  delivery: Delivery;
  endpoint: WebhookEndpoint;
  body: string;
  messageId: string;
}

/**
 * Pushes events to webhook endpoints: Standard Webhooks signatures, the spec's retry schedule on sandbox
 * time, endpoint disabling after 3 days of failure, and the webhook faults (drop, duplicate, delay, reorder).
 */
export class WebhookDispatcher {
  readonly endpoints: WebhookEndpoints;
  readonly #o: Required<WebhookDispatcherOptions>;
  readonly #deliveries: Delivery[] = [];
  readonly #ready: Pending[] = [];
  readonly #timers = new Set<NodeJS.Timeout | { cancel(): void }>();
  #inFlight = 0;
  #waitingFirst = 0;
  #flushWaiters: (() => void)[] = [];
  #closed = false;
  readonly #agents = createWebhookAgents();

  constructor(options: WebhookDispatcherOptions) {
    this.#o = { replyTimeoutMs: DEFAULT_REPLY_TIMEOUT_MS, maxInFlight: 64, keepDeliveries: 5000, ...options };
    this.endpoints = new WebhookEndpoints({
      clock: options.clock,
      ids: options.ids,
      defaultApplicationId: options.defaultApplicationId,
    });
  }

  /** Queues an event for every enabled endpoint whose types match. */
  enqueue(event: SandboxEvent, onlyApplicationId?: string): Delivery[] {
    const made: Delivery[] = [];
    for (const endpoint of this.endpoints.all()) {
      if (!endpoint.enabled || !matchesTypes(event.type, endpoint.types)) continue;
      if (onlyApplicationId && endpoint.applicationId !== onlyApplicationId) continue;
      const envelope = this.#o.envelopeFor(event, endpoint.applicationId);
      if (envelope) made.push(this.#start(endpoint, envelope));
    }
    return made;
  }

  /** Sends a `webhook.test` event to one endpoint; it is not part of the event log. */
  sendTest(endpointId: string, merchantId: string): Delivery {
    const endpoint = this.endpoints.get(endpointId);
    const event = testEvent(this.#o.ids.next("evt"), this.#o.clock.iso(), merchantId);
    return this.#start(endpoint, event);
  }

  deliveries(): Delivery[] {
    return [...this.#deliveries];
  }

  /** Resolves once nothing is in flight and no first attempt is waiting; retries scheduled later do not count. */
  flush(): Promise<void> {
    if (this.#idle()) return Promise.resolve();
    return new Promise((resolve) => this.#flushWaiters.push(resolve));
  }

  close(): void {
    this.#closed = true;
    this.#agents.destroy();
    for (const t of this.#timers) {
      if ("cancel" in t) t.cancel();
      else clearTimeout(t);
    }
    this.#timers.clear();
    this.#ready.length = 0;
    this.#waitingFirst = 0;
    this.#settle();
  }

  #start(endpoint: WebhookEndpoint, event: SandboxEvent): Delivery {
    const delivery: Delivery = {
      id: this.#o.ids.next("dlv"),
      event_id: event.id,
      event_type: event.type,
      endpoint_id: endpoint.id,
      status: "pending",
      attempts: [],
      next_attempt_at: this.#o.clock.iso(),
    };
    this.#remember(delivery);
    const plan = this.#o.faults.planWebhook();
    if (plan.drop) {
      delivery.status = "dropped";
      delivery.next_attempt_at = null;
      this.#o.stats.counters.webhooksDropped++;
      return delivery;
    }
    const pending: Pending = { delivery, endpoint, body: JSON.stringify(event), messageId: event.id };
    this.#firstAttempt(pending, plan.delayMs);
    if (plan.duplicate) {
      this.#o.stats.counters.webhooksDuplicated++;
      const twin: Delivery = { ...delivery, id: this.#o.ids.next("dlv"), attempts: [] };
      this.#remember(twin);
      this.#firstAttempt({ ...pending, delivery: twin }, plan.delayMs + 1);
    }
    return delivery;
  }

  #firstAttempt(pending: Pending, delayMs: number): void {
    this.#waitingFirst++;
    const go = (): void => {
      this.#waitingFirst--;
      this.#ready.push(pending);
      this.#pump();
    };
    if (delayMs <= 0) {
      this.#ready.push(pending);
      this.#waitingFirst--;
      queueMicrotask(() => this.#pump());
      return;
    }
    const t = setTimeout(() => {
      this.#timers.delete(t);
      go();
    }, delayMs);
    this.#timers.add(t);
  }

  #pump(): void {
    while (!this.#closed && this.#inFlight < this.#o.maxInFlight && this.#ready.length) {
      const next = this.#ready.shift()!;
      this.#inFlight++;
      void this.#attempt(next)
        .catch((error: unknown) => {
          // A bug here must not lose the delivery silently: it is failed, visibly.
          this.#fail(next.delivery);
          process.emitWarning(
            `sandbox: webhook attempt crashed: ${error instanceof Error ? error.message : String(error)}`,
          );
        })
        .finally(() => {
          this.#inFlight--;
          this.#pump();
          this.#settle();
        });
    }
    this.#settle();
  }

  async #attempt({ delivery, endpoint, body, messageId }: Pending): Promise<void> {
    const { clock, stats } = this.#o;
    if (!endpoint.enabled || !this.endpoints.has(endpoint.id)) return this.#fail(delivery);
    const number = delivery.attempts.length + 1;
    const record: DeliveryAttempt = {
      attempt: number,
      started_at: clock.iso(),
      ended_at: "",
      status: null,
      error: null,
    };
    stats.counters.webhookAttempts++;
    const outcome = await postWebhook({
      url: endpoint.url,
      secrets: endpoint.secrets,
      messageId,
      body,
      timeoutMs: this.#o.replyTimeoutMs,
      agents: this.#agents,
    });
    record.status = outcome.status;
    record.error = outcome.error;
    record.ended_at = clock.iso();
    delivery.attempts.push(record);
    if (record.status !== null && record.status >= 200 && record.status < 300) {
      delivery.status = "delivered";
      delivery.next_attempt_at = null;
      this.endpoints.noteSuccess(endpoint);
      stats.counters.webhooksDelivered++;
      return;
    }
    const now = clock.now();
    if (this.endpoints.noteFailure(endpoint, now)) stats.counters.webhookEndpointsDisabled++;
    const wait = RETRY_SCHEDULE_MS[number];
    if (wait === undefined || !endpoint.enabled || this.#closed) return this.#fail(delivery);
    delivery.next_attempt_at = new Date(now + wait).toISOString();
    const task = clock.after(wait, () => {
      this.#timers.delete(task);
      this.#ready.push({ delivery, endpoint, body, messageId });
      this.#pump();
    });
    this.#timers.add(task);
  }

  #fail(delivery: Delivery): void {
    delivery.status = "failed";
    delivery.next_attempt_at = null;
    this.#o.stats.counters.webhooksFailed++;
  }

  #remember(delivery: Delivery): void {
    this.#deliveries.push(delivery);
    if (this.#deliveries.length > this.#o.keepDeliveries)
      this.#deliveries.splice(0, this.#deliveries.length - this.#o.keepDeliveries);
  }

  #idle(): boolean {
    return this.#inFlight === 0 && this.#waitingFirst === 0 && this.#ready.length === 0;
  }

  #settle(): void {
    if (!this.#idle() || this.#flushWaiters.length === 0) return;
    const waiters = this.#flushWaiters;
    this.#flushWaiters = [];
    for (const w of waiters) w();
  }
}
