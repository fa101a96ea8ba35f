import type { Sql } from "../connection/connect.ts";
import { DbError } from "../db-error.ts";

/**
 * Gives every role `loops-sync grant` recorded its rights again, so tables, views and functions the migrations
 * of this run added are covered. Runs inside migrate's transaction: when a grant fails, the migrations roll back
 * with it and nothing is left half-granted. Rows of roles dropped since are removed.
 */
export async function reapplyRoleRights(tx: Sql): Promise<string[]> {
  const [table] = await tx<
    { exists: boolean }[]
  >`select to_regclass('sync.role_grants') is not null as exists`;
  if (!table?.exists) return [];
  await tx`delete from sync.role_grants g where not exists (select from pg_roles r where r.oid = g.role_oid)`;
  const roles = await tx<{ oid: number; name: string; rights: string }[]>`
    select g.role_oid::int8 as oid, r.rolname as name, g.rights
      from sync.role_grants g join pg_roles r on r.oid = g.role_oid order by g.role_oid`;
  for (const role of roles) {
    try {
      await tx`select sync.apply_role_rights(${role.oid}, ${role.rights})`;
    } catch (error) {
      const e = error as { message?: string; hint?: string };
      throw new DbError(
        "migration",
        "migration_grants",
        `migrate: cannot keep role ${role.name}'s ${role.rights} rights (loops-sync grant): ${e.message}${e.hint ? `; ${e.hint}` : ""}; nothing was applied`,
        { cause: error },
      );
    }
  }
  return roles.map((r) => r.name);
}
