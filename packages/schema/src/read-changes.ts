import { CHANGE_RESOURCES, type ChangeResource } from "./change-feed.ts";
import type { PostgresJsHandle } from "./postgres-js-dialect.ts";

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
  /** Only changes of these resources (filtered in the database). Default: every resource. */
  resources?: readonly ChangeResource[];
  /** Only changes of these merchants (filtered in the database). Default: every merchant. */
  merchantIds?: readonly string[];
}

/**
 * The filter as `replica.read_changes` and `replica.create_consumer` take it: JSON text of a non-empty array,
 * or null for "all". Throws a RangeError naming `what` for an empty list, an unknown resource or an empty id.
 */
export function filterJson(
  what: string,
  resources: readonly string[] | undefined,
  merchantIds: readonly string[] | undefined,
): { resources: string | null; merchantIds: string | null } {
  if (resources !== undefined) {
    const bad = resources.find((r) => !(CHANGE_RESOURCES as readonly string[]).includes(r));
    if (resources.length === 0 || bad !== undefined) {
      throw new RangeError(
        `${what}: resources must be omitted (every resource) or some of ${CHANGE_RESOURCES.join(", ")}, got ${JSON.stringify(resources)}`,
      );
    }
  }
  if (
    merchantIds !== undefined &&
    (merchantIds.length === 0 || merchantIds.some((m) => typeof m !== "string" || !m))
  ) {
    throw new RangeError(
      `${what}: merchantIds must be omitted (every merchant) or non-empty ids, got ${JSON.stringify(merchantIds)}`,
    );
  }
  return {
    resources: resources === undefined ? null : JSON.stringify(resources),
    merchantIds: merchantIds === undefined ? null : JSON.stringify(merchantIds),
  };
}

/** SQL for a text[] parameter sent as JSON text (null stays null): unprepared queries have no array types. */
export const jsonTextArray = (n: number): string =>
  `(select array_agg(x) from jsonb_array_elements_text($${n}::text::jsonb) x)`;

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

export interface ChangeRow extends Omit<Change, "position" | "version" | "previous_version" | "changed_at"> {
  position: string;
  version: string | null;
  previous_version: string | null;
  changed_at: Date | string;
}

/**
 * The changes after `after`, in position order: `select * from replica.read_changes(after, limit, resources,
 * merchant_ids)`, the filters applied in the database. A reader
 * that always continues after the last position it processed sees every committed change exactly once, in
 * order. Throws {@link ChangesExpiredError} when `after` is older than what prune removed.
 */
export async function readChanges(
  sql: PostgresJsHandle,
  { after, limit = DEFAULT_CHANGES_LIMIT, resources, merchantIds }: ReadChangesOptions,
): Promise<Change[]> {
  checkWhole("readChanges: after", after, 0);
  checkWhole("readChanges: limit", limit, 1, 10_000);
  const filter = filterJson("readChanges", resources, merchantIds);
  let rows: ChangeRow[];
  try {
    // int8 as text: the caller's handle may parse bigint as a string, a number or a BigInt. Unprepared, so
    // it also runs behind a pooler in transaction mode.
    rows = (await sql.unsafe(
      `select ${CHANGE_COLUMNS}
       from replica.read_changes($1::text::bigint, $2::text::integer, ${jsonTextArray(3)}, ${jsonTextArray(4)})`,
      [String(after), String(limit), filter.resources, filter.merchantIds],
    )) as unknown as ChangeRow[];
  } catch (error) {
    const e = error as { code?: string; message?: string };
    if (e?.code === CHANGES_EXPIRED_SQLSTATE) {
      const pruned = Number(/position (\d+)/.exec(e.message ?? "")?.[1] ?? Number.NaN);
      throw new ChangesExpiredError(after, pruned, { cause: error });
    }
    throw error;
  }
  return rows.map(toChange);
}

/** The columns of a `replica.changes` row with int8 as text, for {@link toChange}. */
export const CHANGE_COLUMNS = `position::text as position, resource, resource_id, merchant_id, operation,
              version::text as version, previous_version::text as previous_version, status, previous_status,
              source, event_id, changed_at`;

/** A row selected with {@link CHANGE_COLUMNS} as a {@link Change}. */
export function toChange(r: ChangeRow): Change {
  return {
    ...r,
    position: whole("position", r.position)!,
    version: whole("version", r.version),
    previous_version: whole("previous_version", r.previous_version),
    changed_at: r.changed_at instanceof Date ? r.changed_at : new Date(r.changed_at),
  };
}
