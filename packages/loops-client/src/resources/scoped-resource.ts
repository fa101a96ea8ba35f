import type { z } from "zod";
import type { RequestSpec, Transport } from "../transport.ts";

/** Base of every per-merchant resource: each request names the merchant, so none can forget it. */
export abstract class ScopedResource {
  readonly #transport: Transport;
  readonly #merchantId: string;

  constructor(transport: Transport, merchantId: string) {
    this.#transport = transport;
    this.#merchantId = merchantId;
  }

  protected send<S extends z.ZodType>(spec: Omit<RequestSpec<S>, "merchantId">): Promise<z.output<S>> {
    return this.#transport.request({ ...spec, merchantId: this.#merchantId });
  }
}
