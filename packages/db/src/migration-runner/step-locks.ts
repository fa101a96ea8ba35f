/**
 * The lock one statement takes, read from its text: Postgres' mode name, "none" (no lock on an existing
 * table), or "unknown" (the classifier cannot tell: say so rather than guess).
 */
export type LockMode =
  | "none"
  | "unknown"
  | "ACCESS EXCLUSIVE"
  | "EXCLUSIVE"
  | "SHARE ROW EXCLUSIVE"
  | "SHARE"
  | "SHARE UPDATE EXCLUSIVE"
  | "ROW EXCLUSIVE";

export interface StatementLock {
  lock: LockMode;
  /** The table (or view, index) it locks, as written; null when none or unknown. */
  table: string | null;
  /** What the statement is, e.g. "alter table … add column". */
  statement: string;
  /**
   * How long: "brief" (a catalog change, milliseconds once granted), "batched" (held per batch), "scans" (reads
   * the whole table under the lock), "rewrites" (rewrites the whole table under the lock), or null.
   */
  holds: "brief" | "batched" | "scans" | "rewrites" | null;
}

const NAME = String.raw`((?:"[^"]+"|[a-z_][\w$]*)(?:\.(?:"[^"]+"|[a-z_][\w$]*))?)`;
const IF_EXISTS = "(?:if (?:not )?exists )?";

type Rule = [RegExp, (m: RegExpExecArray, code: string) => Omit<StatementLock, "statement">, string];

// First match wins; order from the specific to the general.
const RULES: Rule[] = [
  [
    new RegExp(`^create (?:unique )?index concurrently ${IF_EXISTS}(?:${NAME} )?on (?:only )?${NAME}`),
    (m) => ({ lock: "SHARE UPDATE EXCLUSIVE", table: m[2]!, holds: null }),
    "create index concurrently",
  ],
  [
    new RegExp(`^create (?:unique )?index ${IF_EXISTS}(?:${NAME} )?on (?:only )?${NAME}`),
    (m) => ({ lock: "SHARE", table: m[2]!, holds: "scans" }),
    "create index (blocks writes while it builds)",
  ],
  [
    new RegExp(`^drop index concurrently ${IF_EXISTS}${NAME}`),
    (m) => ({ lock: "SHARE UPDATE EXCLUSIVE", table: m[1]!, holds: null }),
    "drop index concurrently",
  ],
  [
    new RegExp(`^drop index ${IF_EXISTS}${NAME}`),
    (m) => ({ lock: "ACCESS EXCLUSIVE", table: m[1]!, holds: "brief" }),
    "drop index",
  ],
  [
    new RegExp(`^create (?:unlogged )?table ${IF_EXISTS}${NAME}.*\\breferences ${NAME}`),
    (m) => ({ lock: "SHARE ROW EXCLUSIVE", table: m[2]!, holds: "brief" }),
    "create table (with a foreign key)",
  ],
  [
    /^create (?:unlogged |temp |temporary )?table /,
    () => ({ lock: "none", table: null, holds: null }),
    "create table",
  ],
  [
    new RegExp(`^alter table ${IF_EXISTS}(?:only )?${NAME} .*\\bvalidate constraint\\b`),
    (m) => ({ lock: "SHARE UPDATE EXCLUSIVE", table: m[1]!, holds: "scans" }),
    "alter table … validate constraint",
  ],
  [
    new RegExp(`^alter table ${IF_EXISTS}(?:only )?${NAME} .*\\bgenerated always as .*\\bstored\\b`),
    (m) => ({ lock: "ACCESS EXCLUSIVE", table: m[1]!, holds: "rewrites" }),
    "alter table … stored generated column",
  ],
  [
    new RegExp(
      `^alter table ${IF_EXISTS}(?:only )?${NAME} .*\\b(?:alter column \\S+ |alter )(?:set data )?type\\b`,
    ),
    (m) => ({ lock: "ACCESS EXCLUSIVE", table: m[1]!, holds: "rewrites" }),
    "alter table … alter column type",
  ],
  [
    new RegExp(
      `^alter table ${IF_EXISTS}(?:only )?${NAME} .*\\badd (?:constraint \\S+ )?(?:foreign key|check)\\b.*\\bnot valid\\b`,
    ),
    (m, c) => ({
      lock: /foreign key/.test(c) ? "SHARE ROW EXCLUSIVE" : "ACCESS EXCLUSIVE",
      table: m[1]!,
      holds: "brief",
    }),
    "alter table … add constraint not valid",
  ],
  [
    new RegExp(
      `^alter table ${IF_EXISTS}(?:only )?${NAME} .*\\badd (?:constraint \\S+ )?(?:foreign key|check|unique|primary key)\\b`,
    ),
    (m) => ({ lock: "ACCESS EXCLUSIVE", table: m[1]!, holds: "scans" }),
    "alter table … add constraint",
  ],
  [
    new RegExp(`^alter table ${IF_EXISTS}(?:only )?${NAME} .*\\bset not null\\b`),
    (m) => ({ lock: "ACCESS EXCLUSIVE", table: m[1]!, holds: "scans" }),
    "alter table … set not null",
  ],
  [
    new RegExp(`^alter table ${IF_EXISTS}(?:only )?${NAME} add (?:column )?`),
    (m) => ({ lock: "ACCESS EXCLUSIVE", table: m[1]!, holds: "brief" }),
    "alter table … add column",
  ],
  [
    new RegExp(`^alter table ${IF_EXISTS}(?:only )?${NAME}`),
    (m) => ({ lock: "ACCESS EXCLUSIVE", table: m[1]!, holds: null }),
    "alter table",
  ],
  [
    /^create (?:or replace )?(?:function|procedure|aggregate) /,
    () => ({ lock: "none", table: null, holds: null }),
    "create function",
  ],
  [
    new RegExp(`^create or replace view ${NAME}`),
    (m) => ({ lock: "ACCESS EXCLUSIVE", table: m[1]!, holds: "brief" }),
    "create or replace view",
  ],
  [/^create (?:materialized )?view /, () => ({ lock: "none", table: null, holds: null }), "create view"],
  [
    /^create (?:schema|type|sequence|domain|role) /,
    () => ({ lock: "none", table: null, holds: null }),
    "create schema/type/sequence",
  ],
  [
    new RegExp(`^create (?:or replace )?(?:constraint )?trigger \\S+ .*? on ${NAME}`),
    (m) => ({ lock: "SHARE ROW EXCLUSIVE", table: m[1]!, holds: "brief" }),
    "create trigger",
  ],
  [
    new RegExp(`^drop trigger ${IF_EXISTS}\\S+ on ${NAME}`),
    (m) => ({ lock: "ACCESS EXCLUSIVE", table: m[1]!, holds: "brief" }),
    "drop trigger",
  ],
  [
    new RegExp(`^drop (?:table|view|materialized view) ${IF_EXISTS}${NAME}`),
    (m) => ({ lock: "ACCESS EXCLUSIVE", table: m[1]!, holds: "brief" }),
    "drop table/view",
  ],
  [
    new RegExp(`^comment on (?:table|column|view) ${NAME}`),
    (m) => ({
      lock: "SHARE UPDATE EXCLUSIVE",
      table: m[1]!.split(".").slice(0, -1).join(".") || m[1]!,
      holds: "brief",
    }),
    "comment on",
  ],
  [/^(?:grant|revoke) /, () => ({ lock: "none", table: null, holds: null }), "grant/revoke"],
  [
    new RegExp(`^insert into ${NAME}`),
    (m) => ({ lock: "ROW EXCLUSIVE", table: m[1]!, holds: null }),
    "insert",
  ],
  [
    new RegExp(`^update (?:only )?${NAME}`),
    (m) => ({ lock: "ROW EXCLUSIVE", table: m[1]!, holds: null }),
    "update",
  ],
  [
    new RegExp(`^delete from (?:only )?${NAME}`),
    (m) => ({ lock: "ROW EXCLUSIVE", table: m[1]!, holds: null }),
    "delete",
  ],
  [
    new RegExp(`^with .*?\\b(?:update|delete from|insert into) (?:only )?${NAME}`),
    (m) => ({ lock: "ROW EXCLUSIVE", table: m[1]!, holds: null }),
    "with … update/delete/insert",
  ],
];

/** The lock a statement (its `code`, see splitStatements) takes. Unknown when no rule matches. */
export function statementLock(code: string): StatementLock {
  for (const [pattern, lock, statement] of RULES) {
    const m = pattern.exec(code);
    if (m) return { ...lock(m, code), statement };
  }
  return { lock: "unknown", table: null, statement: code.split(" ").slice(0, 3).join(" "), holds: null };
}
