import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from "kysely";
import type postgres from "postgres";

/** A postgres.js pool, a transaction or a reserved connection: anything that runs `unsafe`. */
// biome-ignore lint/suspicious/noExplicitAny: any postgres.js handle, whatever its custom types
export type PostgresJsHandle = postgres.Sql<any> | postgres.TransactionSql<any> | postgres.ReservedSql<any>;

const WRITES = new Set(["INSERT", "UPDATE", "DELETE", "MERGE"]);

async function run<R>(handle: PostgresJsHandle, query: CompiledQuery): Promise<QueryResult<R>> {
  const result = await handle.unsafe(query.sql, query.parameters as postgres.ParameterOrJSON<never>[], {
    prepare: true,
  });
  const rows = [...result] as R[];
  return WRITES.has(result.command) ? { rows, numAffectedRows: BigInt(result.count) } : { rows };
}

/**
 * One Kysely "connection". Outside a Kysely transaction its statements go to the handle as postgres.js would
 * send them (the pool picks a connection per statement, a transaction handle keeps its own); a Kysely
 * transaction reserves one pooled connection for its BEGIN … COMMIT.
 */
class PostgresJsConnection implements DatabaseConnection {
  #reserved: postgres.ReservedSql<never> | undefined;

  readonly handle: PostgresJsHandle;
  constructor(handle: PostgresJsHandle) {
    this.handle = handle;
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return run<R>(this.#reserved ?? this.handle, query);
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize = 100): AsyncIterableIterator<QueryResult<R>> {
    const handle = this.#reserved ?? this.handle;
    const cursor = handle
      .unsafe(query.sql, query.parameters as postgres.ParameterOrJSON<never>[])
      .cursor(chunkSize);
    for await (const rows of cursor) yield { rows: rows as R[] };
  }

  async begin(settings: TransactionSettings): Promise<void> {
    const handle = this.handle as { reserve?: () => Promise<postgres.ReservedSql<never>> };
    if (typeof handle.reserve !== "function") {
      throw new Error("a Kysely transaction needs a postgres.js pool; this handle is already a transaction");
    }
    this.#reserved = await handle.reserve();
    const modes = [
      settings.isolationLevel ? `isolation level ${settings.isolationLevel}` : "",
      settings.accessMode ?? "",
    ].filter(Boolean);
    await this.#reserved.unsafe(`begin ${modes.join(" ")}`);
  }

  async end(statement: "commit" | "rollback"): Promise<void> {
    await this.#reserved?.unsafe(statement);
  }

  release(): void {
    this.#reserved?.release();
    this.#reserved = undefined;
  }
}

class PostgresJsDriver implements Driver {
  readonly handle: PostgresJsHandle;
  constructor(handle: PostgresJsHandle) {
    this.handle = handle;
  }
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return new PostgresJsConnection(this.handle);
  }
  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await (connection as PostgresJsConnection).begin(settings);
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PostgresJsConnection).end("commit");
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PostgresJsConnection).end("rollback");
  }
  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as PostgresJsConnection).release();
  }
  /** The handle belongs to the caller, who ends it. */
  async destroy(): Promise<void> {}
}

/**
 * A Kysely dialect over a postgres.js handle the caller already has: no second driver, no second pool, and
 * the handle's own settings (its type parsers: bigint as number here) shape what comes back.
 */
export class PostgresJsDialect implements Dialect {
  readonly handle: PostgresJsHandle;
  constructor(handle: PostgresJsHandle) {
    this.handle = handle;
  }
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PostgresJsDriver(this.handle);
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}

/** A Kysely over `handle`; cheap enough to make per call, and ending it never ends the handle. */
export function kyselyOver<DB>(handle: PostgresJsHandle): Kysely<DB> {
  return new Kysely<DB>({ dialect: new PostgresJsDialect(handle) });
}

/**
 * The postgres.js type options the generated types assume: bigint (int8) arrives as a number, as on
 * loops-sync's own connections (no count or amount here approaches 2^53).
 */
export const POSTGRES_TYPES = {
  bigint: { to: 20, from: [20], serialize: (v: number) => String(v), parse: (v: string) => Number(v) },
};
