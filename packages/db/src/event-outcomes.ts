/**
 * The values of `sync.events.outcome` (the check constraint of migration 0001). Counts, metric labels and
 * the prune all read this list, so a new outcome is added here and in a migration, nowhere else.
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

/** Outcomes after which an event is only history: nothing will read or retry it again. */
export const TERMINAL_OUTCOMES = [
  "applied",
  "stale",
  "ignored_self",
  "unhandled",
  "skipped_revoked",
] as const satisfies readonly EventOutcome[];

export type TerminalOutcome = (typeof TERMINAL_OUTCOMES)[number];
