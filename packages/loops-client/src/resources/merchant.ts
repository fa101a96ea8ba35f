import type { CallOptions, IdempotentCallOptions } from "../call-options.ts";
import { type Merchant, MerchantSchema } from "../schemas/merchant.ts";
import type { Transport } from "../transport.ts";
import {
  MerchantCreateInput,
  type MerchantCreateParams,
  MerchantUpdateInput,
  type MerchantUpdateParams,
} from "../validation/merchant-input.ts";
import { validateInput } from "../validation/validate-input.ts";
import { idempotencyKeyFor } from "./idempotency.ts";
import { ScopedResource } from "./scoped-resource.ts";

/** GET and PATCH /merchant: the merchant named by this view's Service-Merchant-Id. */
export class MerchantProfileResource extends ScopedResource {
  async get(options: CallOptions = {}): Promise<Merchant> {
    return this.send({
      method: "GET",
      route: "/merchant",
      path: "/merchant",
      schema: MerchantSchema,
      signal: options.signal,
    });
  }

  async update(params: MerchantUpdateParams, options: CallOptions = {}): Promise<Merchant> {
    const json = validateInput(MerchantUpdateInput, params);
    return this.send({
      method: "PATCH",
      route: "/merchant",
      path: "/merchant",
      json,
      schema: MerchantSchema,
      signal: options.signal,
    });
  }
}

/** POST /merchants, the one call that must not name a merchant (it makes one). */
export class MerchantsResource {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** Creates the business, connects it to this application and invites the owner (Idempotency-Key). */
  async create(params: MerchantCreateParams, options: IdempotentCallOptions = {}): Promise<Merchant> {
    const json = validateInput(MerchantCreateInput, params);
    return this.#transport.request({
      method: "POST",
      route: "/merchants",
      path: "/merchants",
      json,
      merchantId: undefined,
      idempotencyKey: idempotencyKeyFor(options),
      schema: MerchantSchema,
      signal: options.signal,
    });
  }
}
