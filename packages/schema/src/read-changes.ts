import type { PostgresJsHandle } from "./postgres-js-dialect.ts";

/** What `replica.changes.resource` may name (the table's check constraint, migration 0011). */
export const CHANGE_RESOURCES = [
  "order",
  "location",
  "channel_connection",
  "brand",
  "menu",
  "merchant",
  "connection",
  "job",
  "channel",
] as const;

/** What `replica.changes.resource` names. */
export type ChangeResource = (typeof CHANGE_RESOURCES)[number];

/**
 * One committed change of a mirrored row: a row of `replica.read_changes`, with its column names. Positions
 * and versions are plain numbers (safe integers; reading one above 2^53 - 1 throws rather than rounding),
 * whatever bigint parser the caller's handle has, so `after: change.position` is always a valid cursor.
 */
export interface Change {
  /** The cursor: continue with `after: position` to read what follows. */
  position: number;
  resource: ChangeResource;
  resource_id: string;
  /** Null only for resources that belong to no merchant (the channel catalog). */
  merchant_id: string | null;
  operation: "insert" | "update" | "delete";
  version: number | null;
  previous_version: number | null;
  /** The order's status after the change, and before it (null for a new order). */
  status: string | null;
  previous_status: string | null;
  /** How the change came: webhook, catchup, backfill, repair, reconcile, cli. */
  source: string;
  /** The upstream event that led to it, when one did. */
  event_id: string | null;
  changed_at: Date;
}

/**
 * The reader's cursor is older than what `prune` removed (SQLSTATE LS410): changes may have been missed.
 * Resynchronise from the replica tables, then read on after `prunedThrough`.
 */
export class ChangesExpiredError extends Error {
  readonly code = "changes_expired";
  /** The position prune removed changes up to. */
  readonly prunedThrough: number;
  /** The cursor that was refused. */
  readonly after: number;
  constructor(after: number, prunedThrough: number, options?: { cause?: unknown }) {
    super(
      `changes_expired: changes up to position ${prunedThrough} were pruned (RETENTION_DAYS); a reader at ${after} may have missed some; resynchronise from the replica tables, then read on after position ${prunedThrough}`,
      options,
    );
    this.name = "ChangesExpiredError";
    this.after = after;
    this.prunedThrough = prunedThrough;
  }
}

export interface ReadChangesOptions {
  /** Read changes with a position above this; 0 reads from the oldest retained. */
  after: number;
  /** Most changes to return, 1 to 10,000. Default: 1000. */
  limit?: number;
}

/** The SQLSTATE `replica.read_changes` raises for an expired cursor. */
export const CHANGES_EXPIRED_SQLSTATE = "LS410";
/** Default page size of {@link readChanges} and {@link followChanges}. */
export const DEFAULT_CHANGES_LIMIT = 1000;

/** Throws a RangeError naming `what` unless `n` is a whole number in [min, max]. */
export function checkWhole(what: string, n: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new RangeError(`${what} must be a whole number from ${min} to ${max}, got ${String(n)}`);
  }
  return n;
}

const whole = (column: string, value: string | null): number | null => {
  if (value === null) return null;
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError(`replica.changes.${column} ${value} is above 2^53 - 1`);
  return n;
};

interface Row extends Omit<Change, "position" | "version" | "previous_version" | "changed_at"> {
  position: string;
  version: string | null;
  previous_version: string | null;
  changed_at: Date | string;
}

/**
 * The changes after `after`, in position order: `select * from replica.read_changes(after, limit)`. A reader
 * that always continues after the last position it processed sees every committed change exactly once, in
 * order. Throws {@link ChangesExpiredError} when `after` is older than what prune removed.
 */
export async function readChanges(
  sql: PostgresJsHandle,
  { after, limit = DEFAULT_CHANGES_LIMIT }: ReadChangesOptions,
): Promise<Change[]> {
  checkWhole("readChanges: after", after, 0);
  checkWhole("readChanges: limit", limit, 1, 10_000);
  let rows: Row[];
  try {
    // int8 as text: the caller's handle may parse bigint as a string, a number or a BigInt. Unprepared, so
    // it also runs behind a pooler in transaction mode.
    rows = (await sql.unsafe(
      `select position::text as position, resource, resource_id, merchant_id, operation,
              version::text as version, previous_version::text as previous_version, status, previous_status,
              source, event_id, changed_at
       from replica.read_changes($1::text::bigint, $2::text::integer)`,
      [String(after), String(limit)],
    )) as unknown as Row[];
  } catch (error) {
    const e = error as { code?: string; message?: string };
    if (e?.code === CHANGES_EXPIRED_SQLSTATE) {
      const pruned = Number(/position (\d+)/.exec(e.message ?? "")?.[1] ?? Number.NaN);
      throw new ChangesExpiredError(after, pruned, { cause: error });
    }
    throw error;
  }
  return rows.map((r) => ({
    ...r,
    position: whole("position", r.position)!,
    version: whole("version", r.version),
    previous_version: whole("previous_version", r.previous_version),
    changed_at: r.changed_at instanceof Date ? r.changed_at : new Date(r.changed_at),
  }));
}
