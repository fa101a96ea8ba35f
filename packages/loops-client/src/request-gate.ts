/** Which share of the request budget an API call draws on. */
export type RequestPriority = "live" | "confirm" | "background";

/** One attempt asking to be sent. */
export interface GateTicket {
  /**
   * `live` (order fetches for webhooks, the token) goes first, then `confirm` (confirming rows applied from
   * an event's payload), then `background` (catch-up, reconcile, backfill, verify).
   */
  priority: RequestPriority;
  /** Background attempts take turns per merchant, so one merchant's backlog does not starve the others. */
  merchantId: string | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * What the transport awaits before each attempt (the token request included), and tells about 429s. The
 * client knows nothing of where the budget lives; loops-sync keeps it in Postgres (`LOOPS_MAX_RPS`).
 */
export interface RequestGate {
  /** Resolves when the attempt may be sent now; rejects with the signal's reason when aborted. */
  acquire(ticket: GateTicket): Promise<void>;
  /** Loops answered 429; `retryAfterSeconds` is its Retry-After when it sent one. */
  rateLimited?(retryAfterSeconds: number | undefined): void;
}

/** What a shared budget grants for one round trip. */
export interface BudgetGrant {
  /** Tokens granted, 0 or more (at most what was asked). */
  granted: number;
  /** The granted tokens must be spent within this many ms, or dropped. */
  validMs: number;
  /** When fewer than asked were granted: ms until the budget may have room again. */
  waitMs: number;
}

/**
 * Asks the shared budget for up to `want` tokens; `live` may use the share kept from background work, and
 * `background` (tokens for background attempts only) is held to the background share when the budget has one.
 */
export type TakeTokens = (want: number, live: boolean, background?: boolean) => Promise<BudgetGrant>;
