/**
 * The values of `sync.events.outcome` (the check constraint of migration 0001). Counts, metric labels and
 * the prune all read this list, so a new outcome is added here and in a migration, nowhere else.
 *
 * The state machine, written once. Only the functions of this folder write `outcome` (a workspace test
 * holds the rest of the tree to it); each is one transition:
 *
 * | from               | to                                   | function                     | who                       |
 * | ------------------ | ------------------------------------ | ---------------------------- | ------------------------- |
 * | (stored)           | pending, or ignored_self (own write) | `storedOutcome`              | the inbox                 |
 * | pending            | any but pending                      | `settleEvents`               | process_events            |
 * | pending, failed    | the refresh's outcome                | `settleRefreshedEvents`      | refresh_merchant/job/…    |
 * | pending            | failed, skipped_revoked              | `settleOrderEvents`          | an order fetch refused    |
 * | pending, failed    | applied, stale                       | `settleCoveredOrderEvents`   | order batch, catch-up, process_events |
 * | pending            | skipped_revoked                      | `skipRevokedMerchantEvents`  | a revocation              |
 * | pending            | unhandled                            | `settleUnknownMerchantEvents`| confirm_merchant refused  |
 * | any                | pending                              | `reopenEvents`               | `replay`, `replay --failed` |
 *
 * Only `pending` and `failed` move on by themselves: `failed` is repaired by a later fetch that covers the
 * event, or by a replay; a refresh's failure never overwrites an earlier success. The terminal outcomes
 * move only through a replay.
 */
export const EVENT_OUTCOMES = [
  /** Stored, not answered yet. */
  "pending",
  /** A fetch made the replica cover it. */
  "applied",
  /** The replica already held that version or newer. */
  "stale",
  /** Caused by this application's own write. */
  "ignored_self",
  /** A type loops-sync does not handle. */
  "unhandled",
  /** Refused (with `error`): a later fetch of the same order may still repair it, so it is not terminal. */
  "failed",
  /** The merchant revoked the connection. */
  "skipped_revoked",
] as const;

export type EventOutcome = (typeof EVENT_OUTCOMES)[number];

/** An outcome a settle records (every one but `pending`). */
export type SettledOutcome = Exclude<EventOutcome, "pending">;

/** Outcomes after which an event is only history: nothing will read or retry it again. */
export const TERMINAL_OUTCOMES = [
  "applied",
  "stale",
  "ignored_self",
  "unhandled",
  "skipped_revoked",
] as const satisfies readonly EventOutcome[];

export type TerminalOutcome = (typeof TERMINAL_OUTCOMES)[number];
