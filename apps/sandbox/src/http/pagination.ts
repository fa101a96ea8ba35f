import { invalidRequest } from "../problem.ts";

/** Page size from `limit`: 1–100, default 50; anything else is 400 invalid_request. */
export function parseLimit(raw: string | undefined, fallback = 50): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isInteger(n) || n < 1 || n > 100) {
    throw invalidRequest([{ field: "limit", message: "must be an integer from 1 to 100" }]);
  }
  return n;
}

/** Opaque cursors: base64url JSON of the last row's sort key, tagged with the list they belong to. */
export function encodeCursor(list: string, key: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify([list, ...key])).toString("base64url");
}

export function decodeCursor(list: string, raw: string | undefined): (string | number)[] | undefined {
  if (raw === undefined || raw === "") return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
    if (
      Array.isArray(parsed) &&
      parsed[0] === list &&
      parsed.slice(1).every((v) => typeof v === "string" || typeof v === "number")
    ) {
      return parsed.slice(1) as (string | number)[];
    }
  } catch {
    // Falls through to the same answer as a well-formed cursor of another list.
  }
  throw invalidRequest([{ field: "cursor", message: "is not a cursor returned by this list" }]);
}

/**
 * A page of rows already in list order, after the row with key `after` (rows compare by `keyOf`, which
 * must be unique and follow the list order).
 */
export function pageAfter<T>(
  rows: readonly T[],
  {
    list,
    cursor,
    limit,
    keyOf,
    isAfter,
  }: {
    list: string;
    cursor: string | undefined;
    limit: number;
    keyOf: (row: T) => (string | number)[];
    /** Whether `row` comes after the cursor key in list order. */
    isAfter: (row: T, key: (string | number)[]) => boolean;
  },
): { data: T[]; next_cursor: string | null } {
  const key = decodeCursor(list, cursor);
  const rest = key ? rows.filter((r) => isAfter(r, key)) : rows;
  const data = rest.slice(0, limit);
  const last = data.at(-1);
  return { data, next_cursor: rest.length > limit && last ? encodeCursor(list, keyOf(last)) : null };
}
