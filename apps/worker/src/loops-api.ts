/**
 * What the worker asks of `@loops-sync/loops-client`, written structurally: `LoopsClient` satisfies it,
 * and so does anything else that speaks the same API (the worker validates what comes back itself).
 */
export interface CallOptions {
  /** Aborted when the worker shuts down, so a long wait (429, slow upstream) releases the job. */
  signal?: AbortSignal;
}

export interface PageOf<T> {
  data: readonly T[];
  next_cursor?: string | null;
}

export interface MerchantApi {
  orders: {
    get(orderId: string, options?: CallOptions): Promise<unknown>;
    /** Only `limit: 1`, as the cheap call that probes a pause (upstream-pause.ts). */
    list(params: { limit: number }, options?: CallOptions): Promise<PageOf<unknown>>;
  };
  merchant: { get(options?: CallOptions): Promise<unknown> };
  connection: { get(options?: CallOptions): Promise<unknown> };
  locations: {
    list(params?: { cursor?: string; limit?: number }, options?: CallOptions): Promise<PageOf<unknown>>;
    channelConnections(locationId: string, options?: CallOptions): Promise<readonly unknown[]>;
  };
  channels: { list(options?: CallOptions): Promise<readonly unknown[]> };
  jobs: { get(jobId: string, options?: CallOptions): Promise<unknown> };
  brands: {
    list(params?: { cursor?: string; limit?: number }, options?: CallOptions): Promise<PageOf<unknown>>;
    get(brandId: string, options?: CallOptions): Promise<unknown>;
  };
  menus: { get(brandId: string, options?: CallOptions): Promise<unknown> };
}

export interface LoopsApi {
  /**
   * A view that sends Service-Merchant-Id on every call. `live` calls go first within the shared request
   * budget (LOOPS_MAX_RPS); the default is background.
   */
  forMerchant(merchantId: string, options?: { priority?: "live" | "background" }): MerchantApi;
}
