import type { Sql } from "../connection/connect.ts";

const CREATE_INDEX_CONCURRENTLY =
  /^create (?:unique )?index concurrently (?:if not exists )?("[^"]+"|[a-z_][\w$]*) on (?:only )?((?:"[^"]+"|[a-z_][\w$]*)(?:\.(?:"[^"]+"|[a-z_][\w$]*))?)/;

/** The index a `create index concurrently` statement (its code) names, and its table; null for any other. */
export function concurrentIndexOf(code: string): { index: string; table: string } | null {
  const m = CREATE_INDEX_CONCURRENTLY.exec(code);
  return m ? { index: m[1]!, table: m[2]! } : null;
}

/**
 * Drops the INVALID index a failed or interrupted `create index concurrently` left behind, so the retry builds
 * it again instead of `if not exists` keeping the broken one. The index lives in its table's schema.
 */
export async function dropInvalidIndex(session: Sql, code: string): Promise<void> {
  const target = concurrentIndexOf(code);
  if (!target) return;
  const [invalid] = await session<{ name: string }[]>`
    select format('%I.%I', n.nspname, c.relname) as name
      from pg_index i
      join pg_class c on c.oid = i.indexrelid
      join pg_namespace n on n.oid = c.relnamespace
     where i.indrelid = to_regclass(${target.table})
       and c.relname = ${target.index.replace(/^"|"$/g, "")}
       and not i.indisvalid`;
  if (invalid) await session.unsafe(`drop index concurrently if exists ${invalid.name}`);
}
