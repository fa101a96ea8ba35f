export type * from "./database.ts";
export { kyselyOver, PostgresJsDialect, type PostgresJsHandle } from "./postgres-js-dialect.ts";
