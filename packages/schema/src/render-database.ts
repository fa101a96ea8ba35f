import type postgres from "postgres";

/** The schemas whose tables and views the generated types cover. */
export const SCHEMAS = ["replica", "reporting", "sync"] as const;

/** The command that rewrites the generated file; the drift test names it. */
export const REGENERATE_COMMAND = "npx -y pnpm@10 run schema:generate";

interface ColumnRow {
  schema: string;
  relation: string;
  kind: string;
  column: string;
  type: string;
  element: string | null;
  not_null: boolean;
  has_default: boolean;
  identity: string;
  generated: string;
}

/** The TypeScript type a value of `type` arrives as over our postgres.js connection (bigint as number). */
const SCALARS: Record<string, string> = {
  text: "string",
  varchar: "string",
  bpchar: "string",
  name: "string",
  uuid: "string",
  interval: "string",
  numeric: "Numeric",
  int2: "number",
  int4: "number",
  int8: "number",
  oid: "number",
  float4: "number",
  float8: "number",
  bool: "boolean",
  timestamptz: "Timestamp",
  timestamp: "Timestamp",
  date: "Timestamp",
  json: "Json",
  jsonb: "Json",
  bytea: "Buffer",
};

const pascal = (s: string): string =>
  s
    .split(/[^a-zA-Z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join("");

function columnType(c: ColumnRow, view: boolean): string {
  const scalar = c.element === null ? (SCALARS[c.type] ?? "unknown") : `${SCALARS[c.element] ?? "unknown"}[]`;
  // Postgres records no nullability for a view's columns, so each may be null.
  const nullable = view || !c.not_null ? `${scalar} | null` : scalar;
  if (c.identity === "a" || c.generated === "s") return `GeneratedAlways<${nullable}>`;
  if (c.identity === "d" || c.has_default) return `Generated<${nullable}>`;
  return nullable;
}

const HEADER = `// Generated from a migrated database by \`${REGENERATE_COMMAND}\`; do not edit.
import type { ColumnType } from "kysely";

/** A column an insert may omit (it has a default). Unlike kysely's own, it keeps a ColumnType's select type. */
export type Generated<T> =
  T extends ColumnType<infer S, infer I, infer U>
    ? ColumnType<S, I | undefined, U>
    : ColumnType<T, T | undefined, T>;
/** A column Postgres always computes (identity always, generated stored): never written. */
export type GeneratedAlways<T> =
  T extends ColumnType<infer S, unknown, unknown> ? ColumnType<S, never, never> : ColumnType<T, never, never>;

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type Json = JsonValue;
/** numeric arrives as a string (exact); a number or a string may be written. */
export type Numeric = ColumnType<string, number | string, number | string>;
/** timestamptz and date arrive as a Date; a Date or an ISO string may be written. */
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
`;

/** The TypeScript source of the Kysely types for {@link SCHEMAS}, read from the database `sql` is on. */
// biome-ignore lint/suspicious/noExplicitAny: any postgres.js pool, whatever its custom types
export async function renderDatabaseTypes(sql: postgres.Sql<any>): Promise<string> {
  const rows = await sql<ColumnRow[]>`
    select n.nspname as schema, c.relname as relation, c.relkind as kind, a.attname as column,
           t.typname as type, case when t.typcategory = 'A' then e.typname end as element,
           a.attnotnull as not_null, a.atthasdef as has_default, a.attidentity::text as identity,
           a.attgenerated::text as generated
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    join pg_type t on t.oid = a.atttypid
    left join pg_type e on e.oid = t.typelem
    where n.nspname = any(${[...SCHEMAS]}::text[]) and c.relkind in ('r', 'p', 'v', 'm')
    order by n.nspname collate "C", c.relname collate "C", a.attnum`;
  const relations = new Map<string, ColumnRow[]>();
  for (const r of rows) {
    const key = `${r.schema}.${r.relation}`;
    relations.set(key, [...(relations.get(key) ?? []), r]);
  }
  const interfaces: string[] = [];
  const entries: string[] = [];
  for (const [key, columns] of relations) {
    const view = columns[0]!.kind === "v" || columns[0]!.kind === "m";
    const name = pascal(key);
    const fields = columns.map((c) => `  ${c.column}: ${columnType(c, view)};`);
    interfaces.push(
      `/** ${view ? "View" : "Table"} ${key}. */\nexport interface ${name} {\n${fields.join("\n")}\n}\n`,
    );
    entries.push(`  "${key}": ${name};`);
  }
  return `${HEADER}\n${interfaces.join("\n")}\nexport interface Database {\n${entries.join("\n")}\n}\n`;
}
