import type { Sql } from "../connection/connect.ts";
import { DbError } from "../db-error.ts";
import { MIGRATION_LOCK } from "../migrate.ts";
import { type GrantableRights, type RoleRights, rightsAfter } from "./role-rights.ts";

export interface GrantRoleRightsOptions {
  /** An existing role's name, exactly as Postgres spells it (case matters). */
  role: string;
  rights: GrantableRights;
  /** Take `rights` (and everything above it) back instead. Default: false. */
  revoke?: boolean;
}

export interface GrantRoleRightsResult {
  role: string;
  database: string;
  /** What the role had from loops-sync before. */
  previous: RoleRights;
  /** What it has now. */
  rights: RoleRights;
  /** Schemas it may use, granted to it by name. */
  schemas: string[];
  /** replica functions it may execute, granted to it by name (signatures). */
  functions: string[];
}

// Postgres's own roles whose members read or write every table whatever we grant.
const ALL_DATA_ROLES = ["pg_read_all_data", "pg_write_all_data"];

/**
 * Gives an existing role a reader's or a consumer's rights in this database (or takes them back), and records
 * it in sync.role_grants so migrate keeps them current. One transaction, under the migration lock: a grant
 * never interleaves with a migration that is adding tables.
 */
export async function grantRoleRights(
  sql: Sql,
  { role, rights, revoke = false }: GrantRoleRightsOptions,
): Promise<GrantRoleRightsResult> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    // Only the owner may grant on the mirror; anyone else (a DBA's role that reads everything) is told so.
    const [me] = await tx<{ user: string; owner: string; owns: boolean }[]>`
      select current_user as user, n.nspowner::regrole::text as owner,
             pg_has_role(current_user, n.nspowner, 'USAGE') as owns
        from pg_namespace n where n.nspname = 'replica'`;
    if (!me?.owns) {
      throw new DbError(
        "role",
        "role_not_owner",
        `grant: DATABASE_URL connects as role ${me?.user}, which does not own the mirror (${me?.owner} does); run grant with the DATABASE_URL that runs loops-sync migrate`,
      );
    }
    const [target] = await tx<
      { oid: number; superuser: boolean; owner: string; owns: boolean; all_data: string | null }[]
    >`
      select r.oid::int8 as oid, r.rolsuper as superuser, n.nspowner::regrole::text as owner,
             pg_has_role(r.oid, n.nspowner, 'MEMBER') as owns,
             (select string_agg(g.rolname, ', ') from pg_roles g
               where g.rolname = any(${ALL_DATA_ROLES}) and pg_has_role(r.oid, g.oid, 'MEMBER')) as all_data
        from pg_roles r, pg_namespace n
       where r.rolname = ${role} and n.nspname = 'replica'`;
    if (!target) {
      throw new DbError(
        "role",
        "role_unknown",
        `grant: role ${JSON.stringify(role)} does not exist on this Postgres server; create it first (create role ${quoteIdent(role)} login password '…') and run grant again`,
      );
    }
    if (!revoke) refuseUnsafe(role, target);
    const [recorded] = await tx<{ rights: GrantableRights }[]>`
      select rights from sync.role_grants where role_oid = ${target.oid}`;
    const previous: RoleRights = recorded?.rights ?? "none";
    const next = rightsAfter(previous, rights, revoke);
    try {
      await tx`select sync.apply_role_rights(${target.oid}, ${next})`;
    } catch (error) {
      const e = error as { code?: string; message?: string; hint?: string };
      if (e.code !== "42501") throw error;
      throw new DbError("role", "role_not_owner", `grant: ${e.message}${e.hint ? `; ${e.hint}` : ""}`, {
        cause: error,
      });
    }
    if (next === "none") {
      await tx`delete from sync.role_grants where role_oid = ${target.oid}`;
    } else {
      await tx`
        insert into sync.role_grants (role_oid, role_name, rights) values (${target.oid}, ${role}, ${next})
        on conflict (role_oid) do update set role_name = excluded.role_name, rights = excluded.rights,
                                             granted_at = now()`;
    }
    const [granted] = await tx<{ database: string; schemas: string[]; functions: string[] }[]>`
      select current_database() as database,
             array(select n.nspname::text from pg_namespace n, aclexplode(n.nspacl) a
                    where a.grantee = ${target.oid} and a.privilege_type = 'USAGE' order by 1) as schemas,
             array(select p.oid::regprocedure::text from pg_proc p, aclexplode(p.proacl) a
                    where p.pronamespace = 'replica'::regnamespace
                      and a.grantee = ${target.oid} and a.privilege_type = 'EXECUTE' order by 1) as functions`;
    return {
      role,
      database: granted!.database,
      previous,
      rights: next,
      schemas: granted!.schemas,
      functions: granted!.functions,
    };
  });
}

/** A role that can already do more than a reader cannot be narrowed by granting it less: say so. */
function refuseUnsafe(
  role: string,
  target: { superuser: boolean; owner: string; owns: boolean; all_data: string | null },
) {
  const why = target.superuser
    ? "is a superuser"
    : target.owns
      ? `owns the mirror (or is a member of its owner, ${target.owner})`
      : target.all_data
        ? `is a member of ${target.all_data}`
        : undefined;
  if (!why) return;
  throw new DbError(
    "role",
    "role_unsafe",
    `grant: role ${JSON.stringify(role)} ${why}, so it can already read and write everything; create a separate role for readers (create role … login) and grant that one`,
  );
}

/** A role name as SQL would need it typed, for the hint in a message. */
function quoteIdent(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}
