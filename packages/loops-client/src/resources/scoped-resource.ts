import type { z } from "zod";
import type { RequestPriority } from "../request-gate.ts";
import type { RequestSpec, Transport } from "../transport.ts";

/** Base of every per-merchant resource: each request names the merchant, so none can forget it. */
export abstract class ScopedResource {
  readonly #transport: Transport;
  readonly #merchantId: string;
  readonly #priority: RequestPriority;

  constructor(transport: Transport, merchantId: string, priority: RequestPriority = "background") {
    this.#transport = transport;
    this.#merchantId = merchantId;
    this.#priority = priority;
  }

  protected send<S extends z.ZodType>(spec: Omit<RequestSpec<S>, "merchantId">): Promise<z.output<S>> {
    return this.#transport.request({ ...spec, merchantId: this.#merchantId, priority: this.#priority });
  }
}
