/**
 * Every graphile-worker task loops-sync runs, with its payload. Producers (receiver, catch-up, CLI) and
 * the worker both import this map, so a job added with the wrong payload does not compile.
 */
export interface TaskPayloads {
  /** Events stored in sync.events (any source) waiting to be dispatched by type. */
  process_events: { eventIds: string[] };
  /**
   * Fetch one order (GET /orders/{id}) and apply it if newer; resolves that order's pending events.
   * Added with job_key `order:<merchantId>:<orderId>` so a burst of events coalesces. `force` fetches even
   * when no pending event asks for a newer version (repair, verify).
   */
  refresh_order: { merchantId: string; orderId: string; force?: boolean };
  /** Brands' locations, their channel connections (GET /locations, /locations/{id}/channel-connections). */
  refresh_locations: { merchantId: string };
  /** The channel catalog (GET /channels), read through any active merchant. */
  refresh_channels: { merchantId: string };
  /** The merchant and its connection (GET /merchant, GET /connection). */
  refresh_merchant: { merchantId: string };
  /** A background job (GET /jobs/{id}) and, after a succeeded menu import, the brand's menu. */
  refresh_job: { merchantId: string; jobId: string };
  /** A brand (GET /brands/{id}) and its menu (GET /brands/{id}/menu), as rows (brand.*, menu.* events). */
  refresh_brand: { merchantId: string; brandId: string };
  /** business_profile.approved: the merchant, its connection, locations and channel connections at once. */
  refresh_go_live: { merchantId: string };
  /** GET /connection for a merchant an event named: known to Loops → active, else recorded as unknown. */
  confirm_merchant: { merchantId: string };
  /** Every mirrored resource of one merchant brought to the upstream's state, writing only what changed. */
  /**
   * `tick`: one merchant of a 0.1.0 RECONCILE_CRON run (counted in sync.scheduled_ticks when it ends).
   * `lastReconciledAt`: queued by the trickle, which saw this last run (null: none); skipped when a later
   * run has ended since.
   */
  reconcile_merchant: { merchantId: string; tick?: boolean; lastReconciledAt?: string | null };
  /** One step of the reconcile trickle (queued by a 0.1.0 worker's cron; the worker steps it itself). */
  refresh_resources: Record<string, unknown>;
  /**
   * Event-log catch-up (packages/catchup): one merchant, or every active one when absent; `dueOnly` (a process
   * start): only those whose last complete catch-up is older than CATCHUP_CRON's interval, or missing.
   * `paced`: one merchant's turn in the catch-up trickle (logged at debug, not info).
   */
  catchup: { merchantId?: string; dueOnly?: boolean; paced?: boolean };
}

export type TaskName = keyof TaskPayloads;

/**
 * Attempts every process_events job gets, whoever adds it (the inbox's SQL, `replay`, `replay --failed`,
 * confirm_merchant): graphile-worker's own default. Jobs that call Loops get DEFAULT_MAX_ATTEMPTS
 * (@loops-sync/replica) instead.
 */
export const PROCESS_EVENTS_MAX_ATTEMPTS = 25;

/**
 * A task's name for SQL that adds its job inside a bigger statement (where `enqueueJob` cannot, because the
 * job must commit with, or be derived from, that statement's rows): checked against the map at compile time.
 */
export function taskName<K extends TaskName>(task: K): K {
  return task;
}

/** A field of a task's payload, for SQL that builds the payload itself: checked against the map. */
export function payloadField<K extends TaskName>(_task: K, field: keyof TaskPayloads[K] & string): string {
  return field;
}
