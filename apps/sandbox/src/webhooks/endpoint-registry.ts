import type { SandboxClock } from "../clock.ts";
import type { IdFactory } from "../ids.ts";
import { notFound } from "../problem.ts";
import { validateEndpointInput, type WebhookEndpoint, type WebhookEndpointInput } from "./endpoints.ts";
import { DISABLE_AFTER_FAILING_MS } from "./retry-schedule.ts";

export type WebhookEndpointPatch = Partial<WebhookEndpointInput> & { enabled?: boolean };

/** The configured webhook endpoints (the partner portal's job upstream). */
export class WebhookEndpoints {
  readonly #endpoints = new Map<string, WebhookEndpoint>();
  readonly #clock: SandboxClock;
  readonly #ids: IdFactory;
  readonly #defaultApplicationId: string;

  constructor({
    clock,
    ids,
    defaultApplicationId,
  }: { clock: SandboxClock; ids: IdFactory; defaultApplicationId: string }) {
    this.#clock = clock;
    this.#ids = ids;
    this.#defaultApplicationId = defaultApplicationId;
  }

  all(): WebhookEndpoint[] {
    return [...this.#endpoints.values()];
  }

  has(id: string): boolean {
    return this.#endpoints.has(id);
  }

  get(id: string): WebhookEndpoint {
    const endpoint = this.#endpoints.get(id);
    if (!endpoint) throw notFound(`webhook endpoint ${id}`);
    return endpoint;
  }

  add(input: WebhookEndpointInput): WebhookEndpoint {
    validateEndpointInput(input);
    const endpoint: WebhookEndpoint = {
      id: this.#ids.next("whe"),
      applicationId: input.applicationId ?? this.#defaultApplicationId,
      url: input.url,
      secrets: [...input.secrets],
      types: input.types?.length ? [...input.types] : undefined,
      enabled: true,
      failingSince: null,
      disabledAt: null,
      createdAt: this.#clock.iso(),
    };
    this.#endpoints.set(endpoint.id, endpoint);
    return endpoint;
  }

  /** Changes URL, secrets (rotation) or types; `enabled: true` re-enables a disabled endpoint. */
  update(id: string, patch: WebhookEndpointPatch): WebhookEndpoint {
    const endpoint = this.get(id);
    validateEndpointInput(patch, true);
    if (patch.url !== undefined) endpoint.url = patch.url;
    if (patch.secrets !== undefined) endpoint.secrets = [...patch.secrets];
    if (patch.types !== undefined) endpoint.types = patch.types.length ? [...patch.types] : undefined;
    if (patch.enabled === true && !endpoint.enabled) {
      endpoint.enabled = true;
      endpoint.failingSince = null;
      endpoint.disabledAt = null;
    } else if (patch.enabled === false) endpoint.enabled = false;
    return endpoint;
  }

  noteSuccess(endpoint: WebhookEndpoint): void {
    endpoint.failingSince = null;
  }

  /** Records a failed attempt; true when this failure ends 3 days of failing and disables the endpoint. */
  noteFailure(endpoint: WebhookEndpoint, now: number): boolean {
    endpoint.failingSince ??= now;
    if (!endpoint.enabled || now - endpoint.failingSince < DISABLE_AFTER_FAILING_MS) return false;
    endpoint.enabled = false;
    endpoint.disabledAt = new Date(now).toISOString();
    return true;
  }

  remove(id: string): void {
    if (!this.#endpoints.delete(id)) throw notFound(`webhook endpoint ${id}`);
  }
}
