import type { Sql } from "@loops-sync/db";

/** A merchant doctor knows of: configured (LOOPS_MERCHANT_IDS), learned (sync.merchants) or both. */
export interface RosterMerchant {
  id: string;
  configured: boolean;
  /** sync.merchants.status (active, revoked, unconfirmed, unknown); null when only configured so far. */
  status: string | null;
  /** Revoked by sync.merchants, or every mirrored connection of it revoked (replica.connections). */
  revoked: boolean;
  /** The catch-up cursor (sync.cursors); null when catch-up never ran for it. */
  cursor: { afterEventId: string | null; afterCreatedAt: Date | null } | null;
}

/**
 * Every merchant the deployment knows, read-only (doctor writes nothing). Revocation is read from both places
 * it is kept, so a merchant counts as revoked whichever of them says so.
 */
export async function readMerchantRoster(sql: Sql, configured: readonly string[]): Promise<RosterMerchant[]> {
  const rows = await sql<
    {
      id: string;
      status: string | null;
      connection_revoked: boolean | null;
      has_cursor: boolean;
      after_event_id: string | null;
      after_created_at: Date | null;
    }[]
  >`
    select ids.id, m.status, cn.revoked as connection_revoked, c.merchant_id is not null as has_cursor,
           c.after_event_id, c.after_created_at
    from (select id from sync.merchants
          union select merchant_id from sync.cursors
          union select unnest(${[...configured]}::text[])) ids(id)
    left join sync.merchants m on m.id = ids.id
    left join sync.cursors c on c.merchant_id = ids.id
    left join lateral (
      select bool_or(status = 'revoked') and not bool_or(status = 'active') as revoked
      from replica.connections where merchant_id = ids.id
    ) cn on true
    order by ids.id`;
  const wanted = new Set(configured);
  return rows.map((r) => ({
    id: r.id,
    configured: wanted.has(r.id),
    status: r.status,
    revoked: r.status === "revoked" || r.connection_revoked === true,
    cursor: r.has_cursor ? { afterEventId: r.after_event_id, afterCreatedAt: r.after_created_at } : null,
  }));
}

export interface MerchantSelection {
  /** The merchants whose connection, scopes and event log are asked of Loops. */
  checked: RosterMerchant[];
  /** Merchants that could be asked, before the sample. */
  candidates: number;
  /** Known revoked: listed, never called (as the worker calls them no more). */
  revoked: RosterMerchant[];
}

/**
 * At most `sample` merchants, configured ones first, the rest drawn at random so repeated runs cover more of
 * a large deployment; `only` (--merchant) checks that one, known or not, revoked or not.
 */
export function selectMerchants(
  roster: readonly RosterMerchant[],
  {
    only,
    sample,
    random = Math.random,
  }: { only?: string | undefined; sample: number; random?: () => number },
): MerchantSelection {
  const revoked = roster.filter((m) => m.revoked);
  if (only !== undefined) {
    const known = roster.find((m) => m.id === only);
    return {
      checked: [known ?? { id: only, configured: false, status: null, revoked: false, cursor: null }],
      candidates: 1,
      revoked,
    };
  }
  const candidates = roster.filter((m) => !m.revoked);
  const configured = candidates.filter((m) => m.configured);
  const learned = candidates.filter((m) => !m.configured);
  for (let i = learned.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [learned[i], learned[j]] = [learned[j]!, learned[i]!];
  }
  return { checked: [...configured, ...learned].slice(0, sample), candidates: candidates.length, revoked };
}
