/** Per-call options every method accepts. */
export interface CallOptions {
  /** Cancels the call, retries and waits included. Default: none. */
  signal?: AbortSignal;
}

/** Options of the POSTs that accept an Idempotency-Key. */
export interface IdempotentCallOptions extends CallOptions {
  /**
   * A UUID to send as Idempotency-Key; pass the same key when repeating a logical call (for
   * example after a crash) so Loops answers the first result instead of changing twice.
   * Default: a fresh random UUID per call, reused across that call's retries.
   */
  idempotencyKey?: string;
}
