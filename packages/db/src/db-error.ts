/** Why the embedded PostgreSQL did not start; callers may switch on it. */
export type EmbeddedFailure =
  | "permission"
  | "port-taken"
  | "already-running"
  | "disk-full"
  | "unsupported-platform"
  | "failed";

/**
 * A migration refused: edited after it was applied, badly named, failed to run, the rights `loops-sync grant`
 * gave could not be re-applied to what it added (`migration_grants`), an online file breaks the step rules
 * (`migration_malformed`), or a step kept losing its lock to another process (`migration_blocked`).
 */
export type MigrationFailure =
  | "migration_changed"
  | "migration_failed"
  | "migration_name"
  | "migration_grants"
  | "migration_malformed"
  | "migration_blocked";

/**
 * `loops-sync grant` refused: no such role, a role whose rights cannot be narrowed (superuser, owner of the
 * mirror, member of pg_read_all_data/pg_write_all_data), or the connection is not the mirror's owner.
 */
export type RoleFailure = "role_unknown" | "role_unsafe" | "role_not_owner";

/**
 * Which part of the database layer failed: `embedded` (the embedded PostgreSQL did not start; `code` is an
 * EmbeddedFailure), `migration` (a MigrationFailure), `rolled_back` (Postgres answered a pipelined COMMIT
 * with a rollback and no statement said why), `role` (a RoleFailure).
 */
export type DbErrorKind = "embedded" | "migration" | "rolled_back" | "role";

type CodeOf<K extends DbErrorKind> = K extends "embedded"
  ? EmbeddedFailure
  : K extends "migration"
    ? MigrationFailure
    : K extends "role"
      ? RoleFailure
      : "rolled_back";

/** The database layer's one error. `message` is one line naming the cause and, where there is one, the fix. */
export class DbError<K extends DbErrorKind = DbErrorKind> extends Error {
  readonly kind: K;
  readonly code: CodeOf<K>;
  constructor(kind: K, code: CodeOf<K>, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "DbError";
    this.kind = kind;
    this.code = code;
  }
}

/** True when `error` is a DbError of `kind`. */
export function isDbError<K extends DbErrorKind>(error: unknown, kind: K): error is DbError<K> {
  return error instanceof DbError && error.kind === kind;
}
